// zipc/zipc.hpp - the whole public API in one include.
#pragma once

#include "zipc/error.hpp"
#include "zipc/event.hpp"
#include "zipc/heap.hpp"
#include "zipc/mutex.hpp"
#include "zipc/offset_ptr.hpp"
#include "zipc/process.hpp"
#include "zipc/queue.hpp"
#include "zipc/rpc.hpp"
#include "zipc/segment.hpp"
#include "zipc/stl_allocator.hpp"
#include "zipc/topic.hpp"
#include "zipc/typed.hpp"
