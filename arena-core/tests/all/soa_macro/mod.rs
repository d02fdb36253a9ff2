//! A small `macro_rules!` stand-in for `#[derive(Soa)]` (arena-core cannot depend on the derive,
//! and Miri runs arena-core's tests): writes the same view structs and the same safe impl.
#![allow(dead_code)]

/// `soa_struct! { #[derive(..)] pub struct Name / NameRef, NameMut, NameSlices, NameSlicesMut,
/// align N { field: Ty, .. } }`
#[macro_export]
macro_rules! soa_struct {
    (@cols) => { () };
    (@cols $t:ty $(, $rest:ty)*) => { (::arena_core::soa::Col<$t>, soa_struct!(@cols $($rest),*)) };
    (@tuple) => { () };
    (@tuple $f:ident $(, $rest:ident)*) => { ($f, soa_struct!(@tuple $($rest),*)) };
    (
        $(#[$m:meta])*
        pub struct $name:ident / $r:ident, $mu:ident, $sl:ident, $slm:ident, align $align:literal {
            $($f:ident : $t:ty),* $(,)?
        }
    ) => {
        $(#[$m])*
        #[allow(dead_code)]
        pub struct $name { $(pub $f: $t),* }
        #[derive(Debug, Clone, Copy)]
        #[allow(dead_code)]
        pub struct $r<'a> { $(pub $f: &'a $t),* }
        #[derive(Debug)]
        #[allow(dead_code)]
        pub struct $mu<'a> { $(pub $f: &'a mut $t),* }
        #[derive(Debug, Clone, Copy)]
        #[allow(dead_code)]
        pub struct $sl<'a> { $(pub $f: &'a [$t]),* }
        #[derive(Debug)]
        #[allow(dead_code)]
        pub struct $slm<'a> { $(pub $f: &'a mut [$t]),* }
        impl ::arena_core::soa::Soa for $name {
            type Columns = soa_struct!(@cols $($t),*);
            type Ref<'a> = $r<'a>;
            type Mut<'a> = $mu<'a>;
            type Slices<'a> = $sl<'a>;
            type SlicesMut<'a> = $slm<'a>;
            const ALIGN: usize = $align;
            fn into_columns(self) -> <Self::Columns as ::arena_core::soa::Columns>::Owned {
                let $name { $($f),* } = self;
                soa_struct!(@tuple $($f),*)
            }
            fn from_columns(c: <Self::Columns as ::arena_core::soa::Columns>::Owned) -> Self {
                let soa_struct!(@tuple $($f),*) = c;
                $name { $($f),* }
            }
            fn view<'a>(c: <Self::Columns as ::arena_core::soa::Columns>::Ref<'a>) -> $r<'a> {
                let soa_struct!(@tuple $($f),*) = c;
                $r { $($f),* }
            }
            fn view_mut<'a>(c: <Self::Columns as ::arena_core::soa::Columns>::Mut<'a>) -> $mu<'a> {
                let soa_struct!(@tuple $($f),*) = c;
                $mu { $($f),* }
            }
            fn view_slices<'a>(c: <Self::Columns as ::arena_core::soa::Columns>::Slices<'a>) -> $sl<'a> {
                let soa_struct!(@tuple $($f),*) = c;
                $sl { $($f),* }
            }
            fn view_slices_mut<'a>(
                c: <Self::Columns as ::arena_core::soa::Columns>::SlicesMut<'a>,
            ) -> $slm<'a> {
                let soa_struct!(@tuple $($f),*) = c;
                $slm { $($f),* }
            }
        }
    };
}

soa_struct! {
    /// The particle: seven `f32`.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct Particle / ParticleRef, ParticleMut, ParticleSlices, ParticleSlicesMut, align 1 {
        x: f32, y: f32, z: f32, vx: f32, vy: f32, vz: f32, life: f32,
    }
}

soa_struct! {
    /// The exercise enemy.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Enemy / EnemyRef, EnemyMut, EnemySlices, EnemySlicesMut, align 1 {
        x: f32, y: f32, health: f32, id: i32,
    }
}

soa_struct! {
    /// Mixed alignments, drop glue and a zero-sized field.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Mixed / MixedRef, MixedMut, MixedSlices, MixedSlicesMut, align 1 {
        tag: u8, name: String, unit: (), wide: u64, half: u16,
    }
}

soa_struct! {
    /// Every column on a 64-byte boundary.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Aligned / AlignedRef, AlignedMut, AlignedSlices, AlignedSlicesMut, align 64 {
        a: u8, b: u32, c: Box<u16>,
    }
}

soa_struct! {
    /// Only zero-sized fields.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Nothing / NothingRef, NothingMut, NothingSlices, NothingSlicesMut, align 1 {
        a: (), b: core::marker::PhantomData<String>,
    }
}
