#pragma once
// presto::channels: Joyce/CSP communication between threads (Brinch Hansen's agents are
// presto threads, started with presto::fork). Everything in one include.

#include <presto/channels/basic_channel.hpp>
#include <presto/channels/buffered_channel.hpp>
#include <presto/channels/channel.hpp>
#include <presto/channels/poll.hpp>
