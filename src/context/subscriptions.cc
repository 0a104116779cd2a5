// Freezing keys in effect, subscriptions and declared consumers.
#include <algorithm>

#include "context/store_impl.h"
#include "context/testing.h"

namespace msrt::context {

void Store::MarkInEffect(Family family, std::string_view key, std::string reason) {
  int slot = impl_->ResolvePublic(family, key, /*is_set=*/false, nullptr);
  std::unique_lock lock(impl_->state_mutex);
  Slot& s = impl_->family(family).slots[slot];
  if (!s.in_effect) {
    s.in_effect = true;
    s.in_effect_reason = std::move(reason);
  }
}

namespace testing {
void ForgetInEffect(Store& store, Family family, std::string_view key) {
  Store::Impl& impl = *store.impl_;
  int slot = impl.ResolvePublic(family, key, /*is_set=*/false, nullptr);
  std::unique_lock lock(impl.state_mutex);
  Slot& s = impl.family(family).slots[slot];
  s.in_effect = false;
  s.in_effect_reason.clear();
}
}  // namespace testing

bool Store::IsInEffect(Family family, std::string_view key) const {
  int slot = impl_->ResolvePublic(family, key, /*is_set=*/false, nullptr);
  std::shared_lock lock(impl_->state_mutex);
  return impl_->family(family).slots[slot].in_effect;
}

namespace {

// Checks the keys and files `entry` (a subscriber or a validator) with the store.
void Register(Store::Impl& impl, const char* api, Family family, const std::vector<std::string>& keys,
              const std::shared_ptr<Subscription::Entry>& entry) {
  for (const std::string& key : keys) {
    int slot = impl.FindSlot(family, key);
    if (slot < 0 || impl.family(family).specs[slot]->visibility != Visibility::kPublic) {
      throw ValueError(StrCat("Store::", api, ": '", key, "' is not a key of ", FamilyName(family), "."));
    }
  }
  entry->family = family;
  entry->keys = keys;
  {
    std::lock_guard lock(impl.subscribers_mutex);
    std::erase_if(impl.subscribers, [](const auto& e) { return !e->active; });
    impl.subscribers.push_back(entry);
  }
}

}  // namespace

Subscription Store::Subscribe(Family family, const std::vector<std::string>& keys, std::string consumer,
                              std::function<void(const Change&)> callback) {
  auto entry = std::make_shared<Subscription::Entry>();
  entry->consumer = std::move(consumer);
  entry->callback = std::move(callback);
  Register(*impl_, "Subscribe", family, keys, entry);
  Subscription sub;
  sub.entry_ = std::move(entry);
  return sub;
}

Subscription Store::AddValidator(Family family, const std::vector<std::string>& keys, std::string consumer,
                                 std::function<void(const PendingGet&)> check, Dict reset_values) {
  for (const auto& [key, value] : reset_values) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      throw ValueError(StrCat("AddValidator: reset value for '", key, "', which is not one of the validated keys"));
    }
  }
  auto entry = std::make_shared<Subscription::Entry>();
  entry->consumer = std::move(consumer);
  entry->validator = std::move(check);
  entry->reset_values = std::move(reset_values);
  Register(*impl_, "AddValidator", family, keys, entry);
  Subscription sub;
  sub.entry_ = std::move(entry);
  return sub;
}

Family Store::FamilyOf(Keys keys) {
  if (keys.size() == 0) throw ValueError("A context subscription needs at least one key.");
  Family family = keys.begin()->get().family();
  for (const OptionKey& key : keys) {
    if (key.family() != family) {
      throw ValueError(StrCat("A context subscription spans one family; '", key.key(), "' is in ",
                              FamilyName(key.family()), ", not ", FamilyName(family), "."));
    }
  }
  return family;
}

std::vector<std::string> Store::KeyNames(Keys keys) {
  std::vector<std::string> names;
  names.reserve(keys.size());
  for (const OptionKey& key : keys) names.emplace_back(key.key());
  return names;
}

void Store::DeclareConsumer(Family family, std::string_view key, std::string consumer) {
  int slot = impl_->ResolvePublic(family, key, /*is_set=*/false, nullptr);
  auto entry = std::make_shared<Subscription::Entry>();
  entry->family = family;
  entry->keys = {std::string(impl_->family(family).specs[slot]->name)};
  entry->consumer = std::move(consumer);
  std::lock_guard lock(impl_->subscribers_mutex);
  impl_->subscribers.push_back(std::move(entry));  // kept for the store's life
}

Subscription& Subscription::operator=(Subscription&& other) noexcept {
  if (this != &other) {
    Reset();
    entry_ = std::move(other.entry_);
  }
  return *this;
}

Subscription::~Subscription() { Reset(); }

void Subscription::Reset() {
  if (entry_) entry_->active = false;
  entry_.reset();
}

DerivedValues ReadFollowedDerivedKeys(const Store::Impl& impl) {
  DerivedValues out;
  std::vector<std::shared_ptr<Subscription::Entry>> entries;
  {
    std::lock_guard lock(const_cast<Store::Impl&>(impl).subscribers_mutex);
    entries = impl.subscribers;
  }
  for (const auto& entry : entries) {
    if (!entry->active || !entry->callback) continue;
    for (const std::string& key : entry->keys) {
      int slot = impl.FindSlot(entry->family, key);
      if (slot < 0 || !impl.family(entry->family).specs[slot]->read) continue;
      SlotId id{static_cast<int>(entry->family), slot};
      bool seen = std::any_of(out.begin(), out.end(), [&id](const auto& d) { return d.first == id; });
      if (seen) continue;
      Value v;
      try {
        v = impl.ReadPublic(entry->family, slot, nullptr);
      } catch (const Error&) {
        v = Value::Object("error", "<unreadable>");
      }
      out.emplace_back(id, std::move(v));
    }
  }
  return out;
}

// Adds derived keys whose value a commit changed, so their subscribers hear.
void AddChangedDerivedKeys(const Store::Impl& impl, const DerivedValues& before, ChangedKeys& changed_keys) {
  for (const auto& [id, old_value] : before) {
    auto family = static_cast<Family>(id.first);
    Value now;
    try {
      now = impl.ReadPublic(family, id.second, nullptr);
    } catch (const Error&) {
      now = Value::Object("error", "<unreadable>");
    }
    auto& changed = changed_keys[id.first];
    std::string name(impl.family(family).specs[id.second]->name);
    if (now != old_value && std::find(changed.begin(), changed.end(), name) == changed.end()) {
      changed.push_back(std::move(name));
    }
  }
}

}  // namespace msrt::context
