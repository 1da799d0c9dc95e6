// stride::data — datasets, samplers, collate, the DataLoader, character-level
// text and TinyShakespeare.
#pragma once

#include "stride/data/collate.h"
#include "stride/data/dataloader.h"
#include "stride/data/dataset.h"
#include "stride/data/sampler.h"
#include "stride/data/text.h"
#include "stride/data/tiny_shakespeare.h"
