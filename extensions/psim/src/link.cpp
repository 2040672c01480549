#include <presto/psim/link.hpp>

#include <presto/psim/logical_process.hpp>

namespace presto::psim {

Link::Link(LogicalProcess& from, LogicalProcess& to, Time lookahead)
    : SynchroObject(from.name() + "->" + to.name()), from_(from), to_(to), lookahead_(lookahead), clock_(lookahead) {}

Link::~Link() noexcept(false) { check_no_waiters(); }

}  // namespace presto::psim
