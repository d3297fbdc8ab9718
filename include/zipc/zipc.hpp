/// \file
/// zipc/zipc.hpp - the whole public API in one include.
#pragma once

#include "zipc/error.hpp"
#include "zipc/event.hpp"
#include "zipc/fd_passing.hpp"
#include "zipc/heap.hpp"
#include "zipc/introspect.hpp"
#include "zipc/log.hpp"
#include "zipc/mutex.hpp"
#include "zipc/offset_ptr.hpp"
#include "zipc/options.hpp"
#include "zipc/process.hpp"
#include "zipc/queue.hpp"
#include "zipc/rpc.hpp"
#include "zipc/segment.hpp"
#include "zipc/stl_allocator.hpp"
#include "zipc/topic.hpp"
#include "zipc/typed.hpp"
#include "zipc/version.hpp"
#include "zipc/waitset.hpp"
