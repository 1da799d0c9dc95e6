// The whole public API of stride: #include <stride/stride.h>.
#pragma once

#include "stride/autograd.h"
#include "stride/device.h"
#include "stride/dtype.h"
#include "stride/error.h"
#include "stride/generator.h"
#include "stride/io.h"
#include "stride/ops.h"
#include "stride/parallel.h"
#include "stride/profiler.h"
#include "stride/scalar.h"
#include "stride/shape.h"
#include "stride/storage.h"
#include "stride/tensor.h"
