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
///
/// // A generic enum's instantiations are marked `enum`:
/// #[derive(Layout)]
/// enum Slot<T> { Empty, Full(T) }
///
/// layouts![enum Slot<u32>, Pair<u16>];
/// ```
///
/// With the `layout-registry` feature each type is a row of the layout snapshot's table
/// (`arena_kit::layout::snapshot`), named by the module it is listed in and the type as written
/// (`game::Pair<u64>`); without it the macro only checks that every type implements
/// [`HasLayout`](crate::HasLayout) (or, marked `enum`, [`HasEnumLayout`](crate::HasEnumLayout)).
#[macro_export]
macro_rules! layouts {
    () => {};
    (enum $ty:ty $(, $($rest:tt)*)?) => {
        $crate::__register_layout!(@listed_enum $ty, $crate::__private_v0_1::core::stringify!($ty));
        $($crate::layouts!($($rest)*);)?
    };
    ($ty:ty $(, $($rest:tt)*)?) => {
        $crate::__register_layout!(@listed $ty, $crate::__private_v0_1::core::stringify!($ty));
        $($crate::layouts!($($rest)*);)?
    };
}

/// Registers one struct or enum: what `#[derive(Layout)]` and [`layouts!`] expand to. Not public API.
#[cfg(feature = "layout-registry")]
#[doc(hidden)]
#[macro_export]
macro_rules! __register_layout {
    (@listed $ty:ty, $name:expr) => {
        $crate::__register_layout!($ty, $name);
    };
    (@listed_enum $ty:ty, $name:expr) => {
        $crate::__register_layout!(@enum $ty, $name);
    };
    (@enum $ty:ty, $name:expr) => {
        $crate::__register_layout!(@submit of_enum, HasEnumLayout, $ty, $name);
    };
    (@submit $ctor:ident, $layout:ident, $ty:ty, $name:expr) => {
        $crate::__private_v0_1::inventory::submit! {
            $crate::__private_v0_1::layout::Registered::$ctor(
                $crate::__private_v0_1::core::concat!(
                    $crate::__private_v0_1::core::module_path!(),
                    "::",
                    $name
                ),
                &<$ty as $crate::__private_v0_1::layout::$layout>::LAYOUT,
            )
        }
    };
    ($ty:ty, $name:expr) => {
        $crate::__register_layout!(@submit of_struct, HasLayout, $ty, $name);
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
    (@listed_enum $ty:ty, $name:expr) => {
        const _: () = {
            let _ = <$ty as $crate::__private_v0_1::layout::HasEnumLayout>::LAYOUT;
        };
    };
    (@enum $ty:ty, $name:expr) => {};
    ($ty:ty, $name:expr) => {};
}
