// Floating-point to integer conversion with defined results for every input.
#pragma once

#include <cstdint>
#include <type_traits>

namespace msrt {

/// A floating value converted to the integer type `To` without undefined
/// behaviour, with the results x86 (and NumPy there) gives: the value
/// truncated toward zero; outside int32's range (int64's for 64-bit types) or
/// NaN, the minimum of that range; narrower types keep the low bits of the
/// int32 result. uint32 goes through int64, and uint64 takes [2^63, 2^64)
/// directly and gives 0 from 2^64 on, as NumPy does there.
template <typename To, typename From>
inline To FloatToInt(From v) {
  static_assert(std::is_floating_point_v<From> && std::is_integral_v<To>);
  if constexpr (std::is_same_v<To, uint64_t>) {
    if (v >= static_cast<From>(9223372036854775808.0)) {  // 2^63 and above (NumPy: 0 from 2^64 on)
      return v < static_cast<From>(18446744073709551616.0) ? static_cast<uint64_t>(v) : 0;
    }
  }
  if constexpr (sizeof(To) == 8 || (sizeof(To) == 4 && std::is_unsigned_v<To>)) {
    // [-2^63, 2^63): the bounds are exact in every floating type.
    bool in_range = v >= static_cast<From>(-9223372036854775808.0) && v < static_cast<From>(9223372036854775808.0);
    return static_cast<To>(in_range ? static_cast<int64_t>(v) : INT64_MIN);
  } else {
    bool in_range = v >= static_cast<From>(-2147483648.0) && v < static_cast<From>(2147483648.0);
    return static_cast<To>(in_range ? static_cast<int32_t>(v) : INT32_MIN);
  }
}

}  // namespace msrt
