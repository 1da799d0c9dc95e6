// Optimizers, learning-rate schedulers and gradient clipping:
// #include <stride/optim.h>.
#pragma once

#include "stride/optim/adagrad.h"
#include "stride/optim/adam.h"
#include "stride/optim/adamax.h"
#include "stride/optim/clip_grad.h"
#include "stride/optim/lr_scheduler.h"
#include "stride/optim/nadam.h"
#include "stride/optim/optimizer.h"
#include "stride/optim/radam.h"
#include "stride/optim/rmsprop.h"
#include "stride/optim/sgd.h"
