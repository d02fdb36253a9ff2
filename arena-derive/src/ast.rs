//! The model of a derive input that every derive here works from: the struct, its fields and its
//! `#[repr]`, borrowing from the syn tree. Each derive instantiates it with its own parsed
//! attributes, `A` for the struct and `F` for a field (`soa::attr::Field`), so a `Field` carries
//! what its `#[soa(...)]` said, the way thiserror's `ast::Field` carries its `attr::Attrs`.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::{Attribute, Data, DeriveInput, Fields, Generics, Ident, Member, Type, Visibility};

use crate::ctxt::Ctxt;

/// A parsed derive input, with the struct's parsed attributes `A` and each field's `F`.
pub struct Input<'a, A, F> {
    /// The type's name.
    pub ident: &'a Ident,
    /// Its generics, bounds and where clause.
    pub generics: &'a Generics,
    /// Its parsed attributes.
    pub attrs: A,
    /// Its visibility.
    pub vis: &'a Visibility,
    /// What kind of item it is, and the fields of a struct.
    pub data: InputData<'a, F>,
    /// The representation from `#[repr(...)]`.
    pub repr: Repr,
}

/// The kind of item a derive was placed on.
pub enum InputData<'a, F> {
    /// A struct with its field style and fields.
    Struct(Style, Vec<Field<'a, F>>),
    /// An enum; the span is the `enum` keyword.
    Enum(Span),
    /// A union; the span is the `union` keyword.
    Union(Span),
}

/// How a struct's fields are written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `struct S { a: u8 }`
    Named,
    /// `struct S(u8);`
    Tuple,
    /// `struct S;`
    Unit,
}

/// One field of a struct, with its parsed attributes `F`.
pub struct Field<'a, F> {
    /// `a` or `0`: how the field is accessed.
    pub member: Member,
    /// The field's type.
    pub ty: &'a Type,
    /// Its visibility.
    pub vis: &'a Visibility,
    /// Its parsed attributes.
    pub attrs: F,
    /// The field as written: its doc comments, and its span for errors about it.
    pub original: &'a syn::Field,
}

impl<F> Field<'_, F> {
    /// The field's name as text: the identifier, or the position in a tuple struct.
    pub fn name(&self) -> String {
        match &self.member {
            Member::Named(ident) => ident.unraw().to_string(),
            Member::Unnamed(index) => index.index.to_string(),
        }
    }
}

/// What `#[repr(...)]` says about the layout.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Repr {
    /// `repr(C)`.
    pub c: bool,
    /// `repr(transparent)`.
    pub transparent: bool,
    /// `repr(packed)` or `repr(packed(N))`.
    pub packed: Option<u64>,
    /// `repr(align(N))`.
    pub align: Option<u64>,
}

impl<'a, A, F> Input<'a, A, F> {
    /// Builds the model: `attrs` parses the struct's attributes, `field_attrs` each field's; they
    /// and a malformed `#[repr]` record their mistakes in `cx`.
    pub fn from_syn(
        cx: &Ctxt,
        node: &'a DeriveInput,
        attrs: impl FnOnce(&Ctxt, &'a [Attribute]) -> A,
        mut field_attrs: impl FnMut(&Ctxt, &'a syn::Field) -> F,
    ) -> Self {
        let attrs = attrs(cx, &node.attrs);
        let data = match &node.data {
            Data::Struct(data) => {
                let (style, fields) = match &data.fields {
                    Fields::Named(f) => (Style::Named, Some(&f.named)),
                    Fields::Unnamed(f) => (Style::Tuple, Some(&f.unnamed)),
                    Fields::Unit => (Style::Unit, None),
                };
                let fields = fields
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, field)| Field {
                        member: match &field.ident {
                            Some(ident) => Member::Named(ident.clone()),
                            None => Member::Unnamed(i.into()),
                        },
                        ty: &field.ty,
                        vis: &field.vis,
                        attrs: field_attrs(cx, field),
                        original: field,
                    })
                    .collect();
                InputData::Struct(style, fields)
            }
            Data::Enum(data) => InputData::Enum(data.enum_token.span),
            Data::Union(data) => InputData::Union(data.union_token.span),
        };
        Input {
            ident: &node.ident,
            generics: &node.generics,
            attrs,
            vis: &node.vis,
            data,
            repr: Repr::from_attrs(cx, &node.attrs),
        }
    }

    /// Whether the type has type or const parameters (lifetimes alone don't change a layout).
    pub fn has_type_params(&self) -> bool {
        self.generics.type_params().next().is_some()
            || self.generics.const_params().next().is_some()
    }
}

impl Repr {
    fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut repr = Repr::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("repr")) {
            let parsed = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("C") {
                    repr.c = true;
                } else if meta.path.is_ident("transparent") {
                    repr.transparent = true;
                } else if meta.path.is_ident("packed") {
                    repr.packed = Some(parenthesized_int(&meta)?.unwrap_or(1));
                } else if meta.path.is_ident("align") {
                    repr.align = parenthesized_int(&meta)?;
                } else if meta.input.peek(syn::token::Paren) {
                    // Integer reprs such as `repr(u8)` only apply to enums; rustc reports them.
                    let content;
                    syn::parenthesized!(content in meta.input);
                    content.parse::<proc_macro2::TokenStream>()?;
                }
                Ok(())
            });
            if let Err(err) = parsed {
                cx.syn_error(err);
            }
        }
        repr
    }
}

fn parenthesized_int(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Option<u64>> {
    if !meta.input.peek(syn::token::Paren) {
        return Ok(None);
    }
    let content;
    syn::parenthesized!(content in meta.input);
    let lit: syn::LitInt = content.parse()?;
    lit.base10_parse().map(Some)
}
