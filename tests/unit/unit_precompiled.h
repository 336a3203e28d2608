// The unit tests' precompiled header: the core's list plus GoogleTest.
#pragma once

#include "precompiled.h"

#include <gtest/gtest.h>
