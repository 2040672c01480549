#pragma once
// The switch of one context to another, for context_switch.hpp. On x86-64 System V ELF it is
// PRESTO's own presto_jump_context (jump_context.cpp says why); elsewhere Boost.Context's
// jump_fcontext. Both take and leave contexts in Boost.Context's fcontext layout, so a context
// made by make_fcontext, or saved by either, is resumed by either.
//
// jump_context(to, data) saves the calling context on its own stack, resumes `to`, and
// returns when some context jumps back to the saved one: `from` is that context as it was
// left (to be saved by its owner, and passed to a later jump), `data` what it passed.

#include <boost/context/detail/fcontext.hpp>

#include <presto/predicted_return.hpp>

// On the platforms of the predicted returns: x86-64 System V ELF, and not under Intel CET
// (-fcf-protection), whose shadow stack would reject the `ret` into a context other than the
// caller's.
#define PRESTO_OWN_JUMP PRESTO_PREDICTED_RETURN

namespace presto::detail {

#if PRESTO_OWN_JUMP
extern "C" boost::context::detail::transfer_t presto_jump_context(void* to, void* data) noexcept;
#endif

inline boost::context::detail::transfer_t jump_context(void* to, void* data) noexcept {
#if PRESTO_OWN_JUMP
  return presto_jump_context(to, data);
#else
  return boost::context::detail::jump_fcontext(static_cast<boost::context::detail::fcontext_t>(to), data);
#endif
}

}  // namespace presto::detail
