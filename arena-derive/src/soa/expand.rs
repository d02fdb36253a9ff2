//! Code generation for `#[derive(Soa)]`: four view structs (`Ref`, `Mut`, `Slices`, `SlicesMut`)
//! and a safe impl of arena-kit-core's `Soa` trait that only converts between a row, a nested tuple of
//! its column values, and the views. Every container is generic code in arena-kit-core.

use proc_macro2::{Group, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    DeriveInput, GenericParam, Generics, Ident, Lifetime, LifetimeParam, WherePredicate,
    parse_quote,
};

use crate::ast::{InputData, Style};
use crate::ctxt::Ctxt;

use super::attr::{Container, Field as FieldAttrs};
use super::{Field, Input, valid};

/// Expands `#[derive(Soa)]`. After an attribute mistake the views and the impl are still emitted
/// (with the mistaken setting left out), so code using them reports no follow-on errors.
pub fn derive(node: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let node = &self_named(node);
    let input = Input::from_syn(&cx, node, Container::from_ast, FieldAttrs::from_ast);
    valid::check(&cx, &input);
    let out = match &input.data {
        InputData::Struct(style, fields) if *style != Style::Unit && !fields.is_empty() => {
            generate(&input, *style, fields)
        }
        _ => TokenStream::new(),
    };
    match cx.check() {
        Ok(()) => out,
        Err(err) => {
            let errors = err.to_compile_error();
            quote!(#out #errors)
        }
    }
}

/// `node` with `Self` in its field types replaced by the struct's name and generics: the field
/// types are copied into the views (`FooRef<'a>` and the rest), where `Self` would name the
/// view. `Self::Item` becomes `<Foo<T>>::Item`, which reads the same in a type and in an
/// expression (an array length).
fn self_named(node: &DeriveInput) -> std::borrow::Cow<'_, DeriveInput> {
    fn mentions_self(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|t| match t {
            TokenTree::Ident(i) => i == "Self",
            TokenTree::Group(g) => mentions_self(g.stream()),
            _ => false,
        })
    }
    fn replace(tokens: TokenStream, name: &TokenStream) -> TokenStream {
        let mut out = TokenStream::new();
        let mut iter = tokens.into_iter().peekable();
        while let Some(t) = iter.next() {
            match t {
                TokenTree::Ident(i) if i == "Self" => {
                    let path_follows =
                        matches!(iter.peek(), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                    let span = i.span();
                    out.extend(if path_follows {
                        quote_spanned!(span=> <#name>)
                    } else {
                        quote_spanned!(span=> #name)
                    });
                }
                TokenTree::Group(g) => {
                    let mut group = Group::new(g.delimiter(), replace(g.stream(), name));
                    group.set_span(g.span());
                    out.extend([TokenTree::Group(group)]);
                }
                other => out.extend([other]),
            }
        }
        out
    }
    let fields: Vec<&syn::Field> = match &node.data {
        syn::Data::Struct(data) => data.fields.iter().collect(),
        _ => Vec::new(),
    };
    if !fields.iter().any(|f| mentions_self(f.ty.to_token_stream())) {
        return std::borrow::Cow::Borrowed(node);
    }
    let ident = &node.ident;
    let (_, ty_generics, _) = node.generics.split_for_impl();
    let name = quote!(#ident #ty_generics);
    let mut node = node.clone();
    if let syn::Data::Struct(data) = &mut node.data {
        for field in data.fields.iter_mut() {
            let tokens = replace(field.ty.to_token_stream(), &name);
            // A type with `Self` replaced by a type is still a type.
            if let Ok(ty) = syn::parse2(tokens) {
                field.ty = ty;
            }
        }
    }
    std::borrow::Cow::Owned(node)
}

/// The four views, in order: name suffix, doc, field type shape, and whether `Clone`/`Copy` apply.
#[derive(Clone, Copy)]
enum View {
    Ref,
    Mut,
    Slices,
    SlicesMut,
}

impl View {
    const ALL: [View; 4] = [View::Ref, View::Mut, View::Slices, View::SlicesMut];

    fn suffix(self) -> &'static str {
        match self {
            View::Ref => "Ref",
            View::Mut => "Mut",
            View::Slices => "Slices",
            View::SlicesMut => "SlicesMut",
        }
    }

    fn doc(self, name: &str) -> String {
        match self {
            View::Ref => format!(
                "Shared references to the fields of one [`{name}`] stored in SoA columns \
                 (from `get`, `iter`)."
            ),
            View::Mut => format!(
                "Exclusive references to the fields of one [`{name}`] stored in SoA columns \
                 (from `get_mut`, `iter_mut`)."
            ),
            View::Slices => {
                format!(
                    "Every column of stored [`{name}`] values as a shared slice (from `slices`)."
                )
            }
            View::SlicesMut => format!(
                "Every column of stored [`{name}`] values as an exclusive slice, each mutable \
                 on its own (from `slices_mut`)."
            ),
        }
    }

    /// The `Soa` associated type and the `Soa` method that builds this view.
    fn assoc(self) -> (Ident, Ident) {
        let (ty, f) = match self {
            View::Ref => ("Ref", "view"),
            View::Mut => ("Mut", "view_mut"),
            View::Slices => ("Slices", "view_slices"),
            View::SlicesMut => ("SlicesMut", "view_slices_mut"),
        };
        (format_ident!("{ty}"), format_ident!("{f}"))
    }

    /// A column's type in this view.
    fn field_ty(
        self,
        ty: &syn::Type,
        nested: bool,
        lt: &Lifetime,
        soa: &TokenStream,
    ) -> TokenStream {
        if nested {
            let (assoc, _) = self.assoc();
            return quote!(<#ty as #soa::Soa>::#assoc<#lt>);
        }
        match self {
            View::Ref => quote!(&#lt #ty),
            View::Mut => quote!(&#lt mut #ty),
            View::Slices => quote!(&#lt [#ty]),
            View::SlicesMut => quote!(&#lt mut [#ty]),
        }
    }

    fn shared(self) -> bool {
        matches!(self, View::Ref | View::Slices)
    }

    fn is_slices(self) -> bool {
        matches!(self, View::Slices | View::SlicesMut)
    }
}

fn generate(input: &Input<'_>, style: Style, fields: &[Field<'_>]) -> TokenStream {
    let attrs = &input.attrs;
    let krate = attrs
        .krate
        .clone()
        .unwrap_or_else(|| parse_quote!(::arena_kit));
    let private = quote!(#krate::__private_v0_1);
    let soa = quote!(#private::soa);
    let nested_bounds = nested_bounds(fields, &soa);
    let ident = input.ident;
    let name = ident.unraw().to_string();
    let vis = input.vis;

    let lt = view_lifetime(input);
    let (view_generics, impl_generics_nested) = view_generics(input, &lt, &nested_bounds);
    let (_, view_ty, view_where) = view_generics.split_for_impl();
    let decl_params = &view_generics.params;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let soa_where = impl_generics_nested.split_for_impl().2;

    let bindings: Vec<Ident> = (0..fields.len())
        .map(|i| format_ident!("__soa_{i}"))
        .collect();
    let members: Vec<&syn::Member> = fields.iter().map(|f| &f.member).collect();
    let nested: Vec<bool> = fields.iter().map(|f| f.attrs.nested.is_some()).collect();

    let columns = fields
        .iter()
        .zip(&nested)
        .rev()
        .fold(quote!(()), |rest, (f, &n)| {
            let ty = f.ty;
            if n {
                quote!((#soa::Nested<#ty>, #rest))
            } else {
                quote!((#soa::Col<#ty>, #rest))
            }
        });
    let pattern = bindings
        .iter()
        .rev()
        .fold(quote!(()), |rest, b| quote!((#b, #rest)));
    let build = quote!({ #(#members: #bindings,)* });

    let mut views = TokenStream::new();
    let mut assoc_types = TokenStream::new();
    let mut view_fns = TokenStream::new();
    for view in View::ALL {
        let view_name = format_ident!("{}{}", ident.unraw(), view.suffix());
        let doc = view.doc(&name);
        let derives: Vec<&syn::Path> = attrs
            .derives
            .iter()
            .filter(|p| {
                let last = p.segments.last().map(|s| &s.ident);
                // `Debug` is always implemented below; a derive would conflict with it.
                last.is_none_or(|i| i != "Debug")
                    && (view.shared() || last.is_none_or(|i| i != "Clone" && i != "Copy"))
            })
            .collect();
        let derive_attr = (!derives.is_empty()).then(|| quote!(#[derive(#(#derives),*)]));
        views.extend(debug_impl(
            &view_name,
            style,
            fields,
            &nested,
            (&view_generics, view_ty.clone(), view_where),
            |ty, n| view.field_ty(ty, n, &lt, &soa),
            &private,
        ));
        let field_decls = fields.iter().zip(&nested).map(|(f, &n)| {
            let fvis = f.vis;
            let fty = view.field_ty(f.ty, n, &lt, &soa);
            let docs = field_docs(f);
            match style {
                Style::Named => {
                    let m = &f.member;
                    quote!(#(#docs)* #fvis #m: #fty)
                }
                _ => quote!(#(#docs)* #fvis #fty),
            }
        });
        let body = match style {
            Style::Named => quote!(#view_where { #(#field_decls,)* }),
            _ => quote!(( #(#field_decls,)* ) #view_where;),
        };
        views.extend(quote! {
            #[doc = #doc]
            #derive_attr
            // Not every program reads every view's every field.
            #[allow(dead_code)]
            #vis struct #view_name<#decl_params> #body
        });
        if !view.is_slices() {
            views.extend(to_value_impl(
                input,
                &view_name,
                view,
                fields,
                &nested,
                (&view_generics, view_ty.clone(), view_where),
                (&lt, &soa, &private),
            ));
        }
        let (assoc, f) = view.assoc();
        assoc_types.extend(quote! {
            type #assoc<#lt> = #view_name #view_ty where Self: #lt;
        });
        view_fns.extend(quote! {
            #[inline(always)]
            fn #f<#lt>(#pattern: <Self::Columns as #soa::Columns>::#assoc<#lt>) -> Self::#assoc<#lt>
            where
                Self: #lt,
            {
                #view_name #build
            }
        });
    }
    let align = attrs
        .align
        .as_ref()
        .map(|lit| quote!(const ALIGN: #private::core::primitive::usize = #lit;));
    let nested_checks = nested_checks(input, fields, &soa);
    // `column_mut::<K>()` lends a column by position to any module: only a `pub` field's.
    let public_fields = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| matches!(f.vis, syn::Visibility::Public(_)))
        .map(|(k, _)| {
            let k = proc_macro2::Literal::usize_unsuffixed(k);
            quote! {
                #[automatically_derived]
                // SAFETY: field `K` is `pub`: any holder of a `&mut` row can set it anyway.
                unsafe impl #impl_generics #soa::PublicField<#k> for #ident #ty_generics #soa_where {}
            }
        });
    // Every field `pub` (any code can build any row with a struct expression, so nothing can rely
    // on the fields' values), or the struct's own `#[soa(plain)]` promise. Not a
    // `#[non_exhaustive]` struct: other crates cannot build it, so its fields being `pub` does not
    // make every row buildable (a view's `to_value` would hand them one). Not a struct whose
    // `Deserialize` goes through a `#[serde(try_from)]` or `from` conversion either: the column
    // formats would read rows that conversion refuses.
    let plain_row = (attrs.plain.is_some()
        || (!attrs.non_exhaustive
            && attrs.serde_conversion.is_none()
            && fields
                .iter()
                .all(|f| matches!(f.vis, syn::Visibility::Public(_)))))
    .then(|| {
        quote! {
            #[automatically_derived]
            // SAFETY: see above: every field is `pub`, or the struct says `#[soa(plain)]`.
            unsafe impl #impl_generics #soa::PlainRow for #ident #ty_generics #soa_where {}
        }
    });
    let field_names = fields.iter().map(|f| f.name());
    let tiled = attrs.tiled.is_some().then(|| {
        super::tiled::generate(
            input,
            style,
            fields,
            &super::tiled::Shared {
                lt: &lt,
                soa: &soa,
                private: &private,
                pattern: &pattern,
                build: &build,
            },
        )
    });

    quote! {
        #views
        #[doc(hidden)]
        const _: () = {
            // A row is split into its fields and rebuilt, so a type with its own `Drop` would run
            // it on values that never existed: this impl conflicts with the blanket one if so.
            trait SoaStructMustNotImplementDrop {}
            #[allow(drop_bounds)]
            impl<T: #private::core::ops::Drop> SoaStructMustNotImplementDrop for T {}
            impl #impl_generics SoaStructMustNotImplementDrop for #ident #ty_generics #where_clause {}
            #[automatically_derived]
            impl #impl_generics #soa::Soa for #ident #ty_generics #soa_where {
                type Columns = #columns;
                #assoc_types
                #align
                const FIELD_NAMES: &'static [&'static #private::core::primitive::str] = &[#(#field_names),*];
                #[inline(always)]
                fn into_columns(
                    self,
                    _: #soa::RowConversion<Self>,
                ) -> <Self::Columns as #soa::Columns>::Owned {
                    let Self #build = self;
                    #pattern
                }
                #[inline(always)]
                fn from_columns(
                    #pattern: <Self::Columns as #soa::Columns>::Owned,
                    _: #soa::RowConversion<Self>,
                ) -> Self {
                    Self #build
                }
                #view_fns
            }
            #(#public_fields)*
            #plain_row
            #nested_checks
        };
        #tiled
    }
}

/// A view's generics for an impl on it: the declaration, its type arguments, its where clause.
pub(super) type ViewGenerics<'g> = (
    &'g syn::Generics,
    syn::TypeGenerics<'g>,
    Option<&'g syn::WhereClause>,
);

/// `Debug` for a view, bounded on its field types (`&'a F: Debug` for `ParticleRef`), printing
/// what `#[derive(Debug)]` on the view would: `ParticleRef { pos: .., vel: .. }`. Always emitted,
/// so `{:?}` on a view works without `#[soa(derive(Debug))]` (rustc's "add `#[derive(Debug)]` to
/// `ParticleRef`" note would point at generated code). The bounds are per field, so a field type
/// without `Debug` is an error only where a view is formatted, and a generic row's views are
/// `Debug` for the arguments whose fields are.
pub(super) fn debug_impl(
    view_name: &Ident,
    style: Style,
    fields: &[Field<'_>],
    nested: &[bool],
    (generics, view_ty, view_where): ViewGenerics<'_>,
    field_ty: impl Fn(&syn::Type, bool) -> TokenStream,
    private: &TokenStream,
) -> TokenStream {
    let fmt = quote!(#private::core::fmt);
    let mut wc = view_where.cloned().unwrap_or_else(|| parse_quote!(where));
    for (f, &n) in fields.iter().zip(nested) {
        let ty = field_ty(f.ty, n);
        wc.predicates.push(parse_quote!(#ty: #fmt::Debug));
    }
    let (impl_generics, _, _) = generics.split_for_impl();
    let name = view_name.unraw().to_string();
    let members = fields.iter().map(|f| &f.member);
    let body = match style {
        Style::Named => {
            let names = fields.iter().map(|f| f.name());
            quote!(__f.debug_struct(#name) #(.field(#names, &self.#members))* .finish())
        }
        _ => quote!(__f.debug_tuple(#name) #(.field(&self.#members))* .finish()),
    };
    quote! {
        #[automatically_derived]
        impl #impl_generics #fmt::Debug for #view_name #view_ty #wc {
            fn fmt(&self, __f: &mut #fmt::Formatter<'_>) -> #fmt::Result {
                #body
            }
        }
    }
}

/// `ToValue` for a row view (`Ref` or `Mut`): a new row with every field cloned, a nested field
/// through its own view's `ToValue`. The bounds carry a binder (`for<'__soa_clone> F: Clone`) so
/// a row with a field that is not `Clone` still compiles; only calling `to_value` on it fails.
fn to_value_impl(
    input: &Input<'_>,
    view_name: &Ident,
    view: View,
    fields: &[Field<'_>],
    nested: &[bool],
    (generics, view_ty, view_where): ViewGenerics<'_>,
    (lt, soa, private): (&Lifetime, &TokenStream, &TokenStream),
) -> TokenStream {
    let clone = quote!(#private::core::clone::Clone);
    let mut wc = view_where.cloned().unwrap_or_else(|| parse_quote!(where));
    let values = fields.iter().zip(nested).map(|(f, &n)| {
        let ty = f.ty;
        let m = &f.member;
        if n {
            let vty = view.field_ty(ty, true, lt, soa);
            wc.predicates
                .push(parse_quote!(for<'__soa_clone> #vty: #soa::ToValue<Value = #ty>));
            quote!(#m: #soa::ToValue::to_value(&self.#m))
        } else {
            wc.predicates
                .push(parse_quote!(for<'__soa_clone> #ty: #clone));
            quote!(#m: <#ty as #clone>::clone(&*self.#m))
        }
    });
    let values: Vec<TokenStream> = values.collect();
    let (impl_generics, _, _) = generics.split_for_impl();
    let ident = input.ident;
    let (_, row_ty, _) = input.generics.split_for_impl();
    // Only a row that is `Clone` itself (one that is not, a token that must stay unique, must not
    // be duplicated field by field through a view) and plain (its clone is its fields' clones).
    wc.predicates
        .push(parse_quote!(for<'__soa_clone> #ident #row_ty: #clone + #soa::PlainRow));
    quote! {
        #[automatically_derived]
        impl #impl_generics #soa::ToValue for #view_name #view_ty #wc {
            type Value = #ident #row_ty;
            #[inline]
            fn to_value(&self) -> #ident #row_ty {
                #ident { #(#values,)* }
            }
        }
    }
}

/// `for<'__soa_nested> Ty: Soa` for each `#[soa(nested)]` field, on the impl and the views. The
/// binder keeps rustc from checking a bound without type parameters where it is written (it would
/// report it once per item: the impl and four views); [`nested_checks`] checks it once instead.
/// (`'__soa_nested`, not `'__soa`: the views may already take `'__soa`.)
fn nested_bounds(fields: &[Field<'_>], soa: &TokenStream) -> Vec<WherePredicate> {
    fields
        .iter()
        .filter(|f| f.attrs.nested.is_some())
        .map(|f| {
            let ty = f.ty;
            parse_quote!(for<'__soa_nested> #ty: #soa::Soa)
        })
        .collect()
}

/// One check per `#[soa(nested)]` field that its type is `Soa`, spanned at the type, so a field
/// whose type is not gets one error at the field. A struct with type or const parameters is
/// checked where it is used instead (the field's type may be `Soa` only for some arguments).
fn nested_checks(input: &Input<'_>, fields: &[Field<'_>], soa: &TokenStream) -> TokenStream {
    if input.has_type_params() {
        return TokenStream::new();
    }
    let (impl_generics, _, where_clause) = input.generics.split_for_impl();
    let calls = fields.iter().filter(|f| f.attrs.nested.is_some()).map(|f| {
        let ty = f.ty;
        quote_spanned!(ty.span()=> #soa::nested_field_is_soa::<#ty>();)
    });
    quote! {
        #[allow(dead_code)]
        fn __soa_nested_fields #impl_generics () #where_clause {
            #(#calls)*
        }
    }
}

/// The lifetime of the views: `'a`, or `'__soa` if the struct already has an `'a`.
/// The generics of a view type (the input's, after a first lifetime `lt` that every type and
/// lifetime parameter outlives, with `bounds`), and the input's own generics with `bounds`: what
/// the row views and the tile views are declared and implemented with.
pub(super) fn view_generics(
    input: &Input<'_>,
    lt: &Lifetime,
    bounds: &[WherePredicate],
) -> (Generics, Generics) {
    let mut view = input.generics.clone();
    view.params
        .insert(0, GenericParam::Lifetime(LifetimeParam::new(lt.clone())));
    let wc = view.make_where_clause();
    for p in input.generics.type_params() {
        let t = &p.ident;
        wc.predicates.push(parse_quote!(#t: #lt));
    }
    for p in input.generics.lifetimes() {
        let l = &p.lifetime;
        wc.predicates.push(parse_quote!(#l: #lt));
    }
    wc.predicates.extend(bounds.iter().cloned());
    let mut own = input.generics.clone();
    own.make_where_clause()
        .predicates
        .extend(bounds.iter().cloned());
    (view, own)
}

pub(super) fn view_lifetime(input: &Input<'_>) -> Lifetime {
    let taken = input.generics.lifetimes().any(|l| l.lifetime.ident == "a");
    Lifetime::new(
        if taken { "'__soa" } else { "'a" },
        proc_macro2::Span::call_site(),
    )
}

/// The field's own doc comments, or a line naming it, so views pass `missing_docs`.
pub(super) fn field_docs(f: &Field<'_>) -> Vec<TokenStream> {
    let own: Vec<TokenStream> = f
        .original
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .map(|a| quote!(#a))
        .collect();
    if own.is_empty() {
        let doc = format!("The `{}` field.", f.name());
        vec![quote!(#[doc = #doc])]
    } else {
        own
    }
}
