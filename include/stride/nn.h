// stride::nn — modules, layers, functional ops and initialisation
// (torch.nn): #include <stride/nn.h>.
#pragma once

#include "stride/nn/functional.h"
#include "stride/nn/init.h"
#include "stride/nn/layers.h"
#include "stride/nn/module.h"
#include "stride/nn/rnn.h"
