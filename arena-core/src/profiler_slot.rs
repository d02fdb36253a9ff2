//! The global profiler sink of the `profiler` feature (`tags::set_profiler_sink`): its `unsafe`
//! half, kept out of `tags` (which forbids `unsafe`). A sink is a fat `&'static dyn` reference,
//! which no atomic holds, so each sink set is boxed once and leaked: the slot holds a thin
//! pointer to that box, loaded with one atomic read per event.

use alloc::boxed::Box;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};

use crate::tags::ProfilerSink;

type SinkRef = &'static dyn ProfilerSink;

/// Null, or a box leaked by [`set`] holding the sink (never freed: a hook on another thread may
/// still be reading it).
static SLOT: AtomicPtr<SinkRef> = AtomicPtr::new(ptr::null_mut());

/// The sink set, if any.
#[inline]
pub(crate) fn get() -> Option<SinkRef> {
    let p = SLOT.load(Ordering::Acquire);
    if p.is_null() {
        return None;
    }
    // SAFETY: a non-null `p` was stored by `set` from `Box::leak` (Release, paired with this
    // Acquire load, so the box's contents are visible), and leaked boxes are never freed or
    // written again: `p` is valid for reads for the rest of the program.
    Some(unsafe { *p })
}

/// Sets or removes the sink. Setting the sink already set (same data and vtable) keeps the box.
pub(crate) fn set(sink: Option<SinkRef>) {
    let new = match sink {
        None => ptr::null_mut(),
        Some(s) if get().is_some_and(|cur| ptr::eq(cur, s)) => return,
        Some(s) => Box::into_raw(Box::new(s)),
    };
    SLOT.store(new, Ordering::Release);
}
