//! One allocator for the extension: mimalloc, for Rust's allocations and tree-sitter's.
//!
//! A cold index of a large tree spends about a tenth of its CPU in glibc's `malloc` and
//! `free` (tree-sitter allocates every subtree and stack node; the extractors build many
//! small strings), much of it in `malloc_consolidate` and arena locking between the rayon
//! workers. mimalloc keeps per-thread free lists, so the same work costs less and scales
//! across cores. Only this extension's allocations move: Python's own and SQLite's stay on
//! the system allocator.
//!
//! mimalloc is built without advising its arenas into transparent huge pages (the crate's
//! `no_thp` feature; the process's own setting is left alone). Advised, every first touch of
//! an arena faulted in a whole 2 MiB page the kernel zeroed: a tenth of a cold index's
//! samples were `clear_page_erms` under mimalloc's free-list extension, and the peak memory
//! held pages half used. Without it a fresh process's first window on Django costs about a
//! tenth less time and memory (benches/README.md, "mimalloc without huge pages").

use core::ffi::c_void;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

unsafe extern "C" fn ts_malloc(size: usize) -> *mut c_void {
    // SAFETY: plain allocation; tree-sitter treats null as out of memory and aborts.
    unsafe { libmimalloc_sys::mi_malloc(size) }
}

unsafe extern "C" fn ts_calloc(count: usize, size: usize) -> *mut c_void {
    // SAFETY: as `ts_malloc`.
    unsafe { libmimalloc_sys::mi_calloc(count, size) }
}

unsafe extern "C" fn ts_realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: `ptr` came from this allocator family (installed before any tree-sitter call).
    unsafe { libmimalloc_sys::mi_realloc(ptr, size) }
}

unsafe extern "C" fn ts_free(ptr: *mut c_void) {
    // SAFETY: as `ts_realloc`.
    unsafe { libmimalloc_sys::mi_free(ptr) }
}

/// Routes tree-sitter's C allocations to mimalloc. Called once, from the module's
/// initialisation, before any parser, tree or query exists (tree-sitter requires that: a
/// block allocated by one family must be freed by the same one).
pub(crate) fn install_tree_sitter() {
    let family = tree_sitter::Allocator {
        malloc: ts_malloc,
        calloc: ts_calloc,
        realloc: ts_realloc,
        free: ts_free,
    };
    // SAFETY: the four functions are one family with malloc's alignment, none returns null
    // for a non-zero size (mimalloc's are infallible short of exhaustion, where tree-sitter
    // aborts either way), and the module initialisation runs before any tree-sitter object
    // exists and holds the GIL, so no other thread calls into tree-sitter meanwhile.
    unsafe { tree_sitter::set_allocator(Some(family)) };
}
