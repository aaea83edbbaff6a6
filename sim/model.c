/* model.c -- placeholder; being written. */
#include "model.h"
