#include <presto/psim/link.hpp>

#include <presto/psim/logical_process.hpp>

namespace presto::psim {

Link::Link(LogicalProcess& from, LogicalProcess& to, Time lookahead)
    : SynchroObject(from.name() + "->" + to.name()), from_(from), to_(to), lookahead_(lookahead) {}

Link::~Link() noexcept(false) { check_no_waiters(); }

Time Link::clock() const noexcept { return to_.in_[slot_].clock; }

std::uint64_t Link::null_messages() const noexcept { return to_.in_[slot_].null_messages; }

}  // namespace presto::psim
