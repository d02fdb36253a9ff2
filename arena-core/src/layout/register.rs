//! The registration macros. `__register_layout!` has two versions: with the `layout-registry`
//! feature it adds rows to the registry, without it the derive's call expands to nothing and
//! `layouts!` only checks its types, so code that lists types builds the same either way.

/// Lists concrete instantiations of generic `#[derive(Layout)]` structs for the layout
/// registry, which the derive cannot do itself (a generic struct has no size until it has type
/// arguments). Write it at module level, like an item.
///
/// ```
/// use arena_kit::{Layout, layouts};
///
/// #[derive(Layout)]
/// struct Pair<T>(T, T);
///
/// layouts![Pair<u64>, Pair<u8>];
/// ```
///
/// With the `layout-registry` feature each type is a row of the layout snapshot's table
/// (`arena_kit::layout::snapshot`), named by the module it is listed in and the type as written
/// (`game::Pair<u64>`); without it the macro only checks that every type implements
/// [`HasLayout`](crate::HasLayout).
#[macro_export]
macro_rules! layouts {
    ($($ty:ty),* $(,)?) => {
        $(
            $crate::__register_layout!(@listed $ty, $crate::__private_v0_1::core::stringify!($ty));
        )*
    };
}

/// Registers one struct: what `#[derive(Layout)]` and [`layouts!`] expand to. Not public API.
#[cfg(feature = "layout-registry")]
#[doc(hidden)]
#[macro_export]
macro_rules! __register_layout {
    (@listed $ty:ty, $name:expr) => {
        $crate::__register_layout!($ty, $name);
    };
    ($ty:ty, $name:expr) => {
        $crate::__private_v0_1::inventory::submit! {
            $crate::__private_v0_1::layout::Registered::of_struct(
                $crate::__private_v0_1::core::concat!(
                    $crate::__private_v0_1::core::module_path!(),
                    "::",
                    $name
                ),
                &<$ty as $crate::__private_v0_1::layout::HasLayout>::LAYOUT,
            )
        }
    };
}

/// Without the `layout-registry` feature: nothing for the derive, so it costs no more than
/// before, and for [`layouts!`] the check that the type has a layout. Not public API.
#[cfg(not(feature = "layout-registry"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __register_layout {
    (@listed $ty:ty, $name:expr) => {
        const _: () = {
            let _ = <$ty as $crate::__private_v0_1::layout::HasLayout>::LAYOUT;
        };
    };
    ($ty:ty, $name:expr) => {};
}
