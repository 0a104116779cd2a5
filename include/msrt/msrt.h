// Everything a C++ user of msrt needs.
#pragma once

#include "msrt/context/context.h"
#include "msrt/core/device.h"
#include "msrt/core/errors.h"
#include "msrt/core/logging.h"
#include "msrt/core/value.h"
