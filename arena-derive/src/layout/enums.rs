//! `#[derive(Layout)]` on an enum: the `HasEnumLayout` impl and its assertions.
//!
//! Nothing is guessed: every number is `size_of`, `align_of` or `offset_of!` on a hidden type
//! generated next to the impl, in one `const _` scope:
//! - per variant, a payload struct of its fields (`#[repr(C)]` when the enum's layout is
//!   specified, the default repr otherwise): the payload's size and alignment;
//! - `repr(u8)` and the like (RFC 2195): per variant a `#[repr(C)]` struct of the tag and the
//!   fields, whose `offset_of!` are the fields' offsets in the enum;
//! - `repr(C)` and `repr(C, u8)`: the tag (a `#[repr(C)]` fieldless copy of the enum, or the
//!   integer) followed by a union of the payload structs, so a field's offset is the union's
//!   offset plus its offset in its payload struct;
//! - per variant with fields, a copy of the enum with that variant's fields replaced by a
//!   non-null pointer (`Box`'s layout): what boxing the variant would make the enum.
//!
//! Each hidden type carries a `PhantomData` of every generic parameter, so it accepts the enum's
//! generics whichever parameters its own fields use.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::{Attribute, DataEnum, DeriveInput, Fields, GenericParam, Index};

use crate::ctxt::Ctxt;

use super::Input;
use super::attr::Kind;
use super::expand::{concrete_type, spanned_panic, type_text};

/// What `#[repr(...)]` says about an enum.
#[derive(Default)]
struct EnumRepr {
    c: bool,
    int: Option<syn::Ident>,
    align: Option<u64>,
}

const INTS: [&str; 12] = [
    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
];

impl EnumRepr {
    /// Reads the reprs; rustc reports malformed ones, so anything unknown is skipped.
    fn from_attrs(attrs: &[Attribute]) -> Self {
        let mut repr = EnumRepr::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("repr")) {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("C") {
                    repr.c = true;
                } else if let Some(ident) = meta
                    .path
                    .get_ident()
                    .filter(|id| INTS.iter().any(|i| *id == i))
                {
                    repr.int = Some(ident.clone());
                } else if meta.path.is_ident("align") {
                    let content;
                    syn::parenthesized!(content in meta.input);
                    let lit: syn::LitInt = content.parse()?;
                    repr.align = Some(lit.base10_parse()?);
                } else if meta.input.peek(syn::token::Paren) {
                    let content;
                    syn::parenthesized!(content in meta.input);
                    content.parse::<TokenStream>()?;
                }
                Ok(())
            });
        }
        repr
    }

    fn is_specified(&self) -> bool {
        self.c || self.int.is_some()
    }
}

/// Reports `#[layout(...)]` on a variant or on a variant's field: it would be silently ignored.
pub fn check_variants(cx: &Ctxt, data: &DataEnum) {
    for v in &data.variants {
        for a in v.attrs.iter().filter(|a| a.path().is_ident("layout")) {
            cx.error_spanned_by(a, "#[layout(...)] goes on the enum, not on a variant");
        }
        for f in &v.fields {
            for a in f.attrs.iter().filter(|a| a.path().is_ident("layout")) {
                cx.error_spanned_by(a, "#[layout(...)] goes on the enum, not on a field");
            }
        }
    }
}

/// The `HasEnumLayout` impl and the hidden types it measures, in one `const _` scope.
pub fn impl_has_enum_layout(
    node: &DeriveInput,
    data: &DataEnum,
    private: &TokenStream,
) -> TokenStream {
    let ident = &node.ident;
    let name = ident.unraw().to_string();
    let generics = &node.generics;
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let core = quote!(#private::core);
    let layout = quote!(#private::layout);
    let repr = EnumRepr::from_attrs(&node.attrs);
    let repr_attrs: Vec<&Attribute> = node
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("repr"))
        .collect();

    // `PhantomData<(*const T, &'a (), ...)>`: uses every type and lifetime parameter.
    let phantom_parts = generics.params.iter().filter_map(|p| match p {
        GenericParam::Type(t) => {
            let t = &t.ident;
            Some(quote!(*const #t))
        }
        GenericParam::Lifetime(l) => {
            let l = &l.lifetime;
            Some(quote!(&#l ()))
        }
        GenericParam::Const(_) => None,
    });
    let phantom = quote!(#core::marker::PhantomData<(#(#phantom_parts,)*)>);

    let mut hidden = TokenStream::new();
    let mut variants = Vec::new();
    let tag_ty = match (&repr.int, repr.c) {
        (Some(int), _) => Some(quote!(#int)),
        (None, true) => {
            // The C tag: a fieldless `#[repr(C)]` copy of the enum, with its discriminants.
            let tags = data.variants.iter().map(|v| {
                let vi = &v.ident;
                let d = v.discriminant.as_ref().map(|(_, e)| quote!(= #e));
                quote!(#vi #d)
            });
            hidden.extend(quote! {
                #[repr(C)]
                enum __ArenaKitTag { #(#tags),* }
            });
            Some(quote!(__ArenaKitTag))
        }
        (None, false) => None,
    };
    let payload_repr = if repr.is_specified() {
        quote!(#[repr(C)])
    } else {
        TokenStream::new()
    };
    let payload_names: Vec<syn::Ident> = (0..data.variants.len())
        .map(|i| format_ident!("__ArenaKitPayload{}", i))
        .collect();
    // `repr(C)` and `repr(C, uN)`: the union of payloads starts after the tag, at the payloads'
    // largest alignment.
    let union_offset = match (&tag_ty, repr.c) {
        (Some(tag), true) => {
            let aligns = payload_names
                .iter()
                .map(|p| quote!(#core::mem::align_of::<#p #ty_generics>()));
            quote!(#layout::round_up(
                #core::mem::size_of::<#tag>(),
                #layout::max_of(&[1, #(#aligns),*]),
            ))
        }
        _ => quote!(0),
    };

    // Explicit discriminants with fields need an integer repr; without one rustc reports the enum,
    // and a copy would only repeat the error.
    let copies_compile =
        repr.int.is_some() || data.variants.iter().all(|v| v.discriminant.is_none());
    for (i, v) in data.variants.iter().enumerate() {
        let vname = v.ident.unraw().to_string();
        let payload = &payload_names[i];
        let tys: Vec<&syn::Type> = v.fields.iter().map(|f| &f.ty).collect();
        hidden.extend(quote! {
            #payload_repr
            struct #payload #impl_generics (#(#tys,)* #phantom) #where_clause;
        });
        let tagged = format_ident!("__ArenaKitTagged{}", i);
        if let (Some(int), false) = (&repr.int, repr.c) {
            hidden.extend(quote! {
                #[repr(C)]
                struct #tagged #impl_generics (#int, #(#tys,)* #phantom) #where_clause;
            });
        }
        let fields = v.fields.iter().enumerate().map(|(j, f)| {
            let fname = match &f.ident {
                Some(id) => id.unraw().to_string(),
                None => j.to_string(),
            };
            let ty = &f.ty;
            let ty_text = type_text(ty);
            let offset = match (&repr.int, repr.c) {
                (Some(_), false) => {
                    let idx = Index::from(j + 1);
                    quote!(#core::mem::offset_of!(#tagged #ty_generics, #idx))
                }
                (_, true) => {
                    let idx = Index::from(j);
                    quote!(#union_offset + #core::mem::offset_of!(#payload #ty_generics, #idx))
                }
                (None, false) => quote!(0),
            };
            quote! {
                #layout::FieldLayout::new(
                    #fname,
                    #ty_text,
                    #offset,
                    #core::mem::size_of::<#ty>(),
                    #core::mem::align_of::<#ty>(),
                )
            }
        });
        let boxed_size = if v.fields.is_empty() || !copies_compile {
            quote!(#core::mem::size_of::<Self>())
        } else {
            let boxed = format_ident!("__ArenaKitBoxed{}", i);
            let copies = data.variants.iter().enumerate().map(|(k, w)| {
                let wi = &w.ident;
                let d = w.discriminant.as_ref().map(|(_, e)| quote!(= #e));
                if k == i {
                    quote!(#wi(#core::ptr::NonNull<()>, #phantom) #d)
                } else {
                    let tys = w.fields.iter().map(|f| &f.ty);
                    match &w.fields {
                        Fields::Unit => quote!(#wi #d),
                        _ => quote!(#wi(#(#tys),*) #d),
                    }
                }
            });
            hidden.extend(quote! {
                #(#repr_attrs)*
                enum #boxed #impl_generics #where_clause { #(#copies),* }
            });
            quote!(#core::mem::size_of::<#boxed #ty_generics>())
        };
        variants.push(quote! {
            #layout::VariantLayout::new(
                #vname,
                #core::mem::size_of::<#payload #ty_generics>(),
                #core::mem::align_of::<#payload #ty_generics>(),
                &[#(#fields),*],
                #boxed_size,
            )
        });
    }

    let int_text = repr.int.as_ref().map(|i| i.to_string());
    let int = match int_text {
        Some(t) => quote!(#core::option::Option::Some(#t)),
        None => quote!(#core::option::Option::None),
    };
    let c = repr.c;
    let align = match repr.align {
        Some(n) => {
            let n = n as usize;
            quote!(#core::option::Option::Some(#n))
        }
        None => quote!(#core::option::Option::None),
    };
    let tag_size = match &tag_ty {
        Some(t) => quote!(#core::mem::size_of::<#t>()),
        None => quote!(0),
    };
    quote! {
        #[doc(hidden)]
        #[allow(dead_code, non_camel_case_types, clippy::all, clippy::pedantic)]
        const _: () = {
            #hidden
            #[automatically_derived]
            impl #impl_generics #layout::HasEnumLayout for #ident #ty_generics #where_clause {
                const LAYOUT: #layout::EnumLayout = #layout::EnumLayout::new(
                    #name,
                    #layout::EnumRepr { c: #c, int: #int, align: #align },
                    #core::mem::size_of::<Self>(),
                    #core::mem::align_of::<Self>(),
                    #tag_size,
                    &[#(#variants),*],
                );
            }
        };
    }
}

/// One `const _` item per assertion on the enum, and one for `report`.
pub fn assertions(input: &Input<'_>, data: &DataEnum, private: &TokenStream) -> TokenStream {
    let attrs = &input.attrs;
    let ty = concrete_type(input);
    let core = quote!(#private::core);
    let checks = quote!(#private::layout::check);
    let mut out = TokenStream::new();
    for a in &attrs.assertions {
        let check = match a.kind {
            Kind::Size => "enum_size",
            Kind::MaxSize => "enum_max_size",
            Kind::Align => "enum_align",
            Kind::MaxPadding => "enum_max_padding",
            Kind::MaxVariantSize => "enum_max_variant_size",
            // Rejected in `valid`.
            Kind::Optimal | Kind::Hot | Kind::SameLine | Kind::SeparateLines => continue,
        };
        let check = syn::Ident::new(check, Span::call_site());
        let arg = a.value.as_ref().map(|v| quote!(#v));
        let value_span = a.value.as_ref().map_or(a.key.span(), |v| v.span());
        let panic = spanned_panic(&core, a.key.span(), value_span);
        let cfg = a.cfg.as_ref().map(|pred| quote!(#[cfg(#pred)]));
        out.extend(quote! {
            #cfg
            const _: () = match #checks::#check::<#ty>(#arg) {
                #core::option::Option::Some(message) => #panic,
                #core::option::Option::None => {}
            };
        });
    }
    if let Some(span) = attrs.report {
        let panic = spanned_panic(&core, span, span);
        let v = data.variants.len();
        let f: usize = data.variants.iter().map(|v| v.fields.len()).sum();
        let cfg = attrs.report_cfg.as_ref().map(|pred| quote!(#[cfg(#pred)]));
        out.extend(quote! {
            #cfg
            const _: () = {
                let message = #checks::enum_report::<
                    #ty,
                    { #checks::enum_report_capacity(#v, #f) },
                >();
                #panic
            };
        });
    }
    out
}
