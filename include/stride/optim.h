// Optimizers, learning-rate schedulers and gradient clipping:
// #include <stride/optim.h>.
#pragma once

#include "stride/optim/adam.h"
#include "stride/optim/clip_grad.h"
#include "stride/optim/lr_scheduler.h"
#include "stride/optim/optimizer.h"
#include "stride/optim/sgd.h"
