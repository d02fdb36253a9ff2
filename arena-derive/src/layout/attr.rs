//! Parsing `#[layout(...)]` with the shared helpers of [`crate::attr`]: every key keeps its span
//! and its value's span, and every mistake is recorded without stopping, so one build reports them
//! all.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Attribute, Ident, LitInt, Member, Path, Token};

use crate::attr::{self, Attr};
use crate::ctxt::Ctxt;

const ATTR: &str = "layout";
/// The keys `#[layout(...)]` accepts, for the unknown-key message.
const KEYS: &str = "size, max_size, align, max_padding, max_variant_size, optimal, hot, \
                    same_line, separate_lines, line, hot_lines, cfg, report, crate";
/// The line size of `hot`, `same_line` and `separate_lines` when `line` is not given.
const DEFAULT_LINE: u64 = 64;

/// The struct-level `#[layout(...)]` attributes of one input.
pub struct Container {
    /// The checks to generate, in the order written.
    pub assertions: Vec<Assertion>,
    /// `report`, with its span.
    pub report: Option<Span>,
    /// The `cfg(...)` predicate of the attribute that holds `report`.
    pub report_cfg: Option<TokenStream>,
    /// `crate = path`: where arena-kit is, for renamed dependencies.
    pub krate: Option<Path>,
}

/// A field's `#[layout(...)]`: there are no field keys, so a field carries nothing; an attribute
/// on one is reported where it is parsed.
pub struct Field;

/// One assertion such as `size = 16` or `hot(pos, vel)`.
pub struct Assertion {
    /// What is checked.
    pub kind: Kind,
    /// The key as written, for its span.
    pub key: Ident,
    /// The value as written (`16`), for its span; `None` for `optimal` and the line checks.
    pub value: Option<LitInt>,
    /// The fields of `hot`, `same_line` or `separate_lines`.
    pub lines: Option<LineCheck>,
    /// The predicate of the attribute's `cfg(...)`: the check is compiled only where it holds.
    pub cfg: Option<TokenStream>,
}

/// The fields and line sizes of a cache-line check.
pub struct LineCheck {
    /// The fields named, as written.
    pub fields: Vec<Member>,
    /// The span of `(a, b)`, so a failure underlines the whole check.
    pub span: Span,
    /// `line = N` of the attribute, or 64.
    pub line: u64,
    /// `hot_lines = N` of the attribute, or 1.
    pub hot_lines: u64,
}

impl Assertion {
    /// The check as written: `size = 16`, `optimal`, `hot(a, b)`.
    pub fn text(&self) -> String {
        let key = &self.key;
        match (&self.value, &self.lines) {
            (Some(v), _) => format!("{key} = {v}"),
            (None, Some(lines)) => format!("{key}({})", member_list(&lines.fields)),
            (None, None) => key.to_string(),
        }
    }
}

/// `a, b`: members as written.
fn member_list(fields: &[Member]) -> String {
    let names: Vec<String> = fields.iter().map(member_name).collect();
    names.join(", ")
}

/// A member's name as a field's: `a` (without `r#`) or `0`.
pub fn member_name(m: &Member) -> String {
    match m {
        Member::Named(ident) => ident.unraw().to_string(),
        Member::Unnamed(index) => index.index.to_string(),
    }
}

/// The kinds of layout assertion.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `size = N`
    Size,
    /// `max_size = N`
    MaxSize,
    /// `align = N`
    Align,
    /// `max_padding = N`
    MaxPadding,
    /// `optimal`
    Optimal,
    /// `max_variant_size = N`, enums only
    MaxVariantSize,
    /// `hot(a, b, ...)`
    Hot,
    /// `same_line(a, b)`
    SameLine,
    /// `separate_lines(a, b)`
    SeparateLines,
}

impl Kind {
    /// The keys given once per attribute (per `cfg`); the line checks may repeat. In discriminant
    /// order: a group's slots are indexed by `kind as usize`.
    const ONCE: [Kind; 6] = [
        Kind::Size,
        Kind::MaxSize,
        Kind::Align,
        Kind::MaxPadding,
        Kind::Optimal,
        Kind::MaxVariantSize,
    ];
    const LINES: [Kind; 3] = [Kind::Hot, Kind::SameLine, Kind::SeparateLines];

    /// The key, which is also the name of the check in arena-kit-core.
    pub fn key(self) -> &'static str {
        match self {
            Kind::Size => "size",
            Kind::MaxSize => "max_size",
            Kind::Align => "align",
            Kind::MaxPadding => "max_padding",
            Kind::Optimal => "optimal",
            Kind::MaxVariantSize => "max_variant_size",
            Kind::Hot => "hot",
            Kind::SameLine => "same_line",
            Kind::SeparateLines => "separate_lines",
        }
    }

    /// Whether this is a cache-line check, whose value is a list of fields.
    pub fn is_line_check(self) -> bool {
        Kind::LINES.contains(&self)
    }
}

/// The once-only keys of the attributes that share one `cfg` (or have none).
struct Group<'c> {
    cfg: String,
    checks: Vec<Attr<'c, Assertion>>,
}

/// An assertion in the order written: a once-only key (group, kind), or a line check.
enum Written {
    Once(usize, Kind),
    Line(Assertion),
}

impl Container {
    /// Parses every `#[layout(...)]` on the struct.
    ///
    /// A `cfg(...)` applies to every check of its attribute, wherever it is written in it, so
    /// each attribute is read twice: once for its `cfg`, then for its keys. The once-only keys
    /// are duplicates when given twice under the same `cfg`.
    pub fn from_ast(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut groups: Vec<Group<'_>> = Vec::new();
        let mut order: Vec<Written> = Vec::new();
        let mut report = Attr::none(cx, ATTR, "report");
        let mut report_cfg = None;
        let mut krate = Attr::none(cx, ATTR, "crate");
        for a in attrs.iter().filter(|a| a.path().is_ident(ATTR)) {
            let cfg = attr_cfg(a);
            let cfg_text = cfg.as_ref().map(ToString::to_string).unwrap_or_default();
            let group = match groups.iter().position(|g| g.cfg == cfg_text) {
                Some(i) => i,
                None => {
                    groups.push(Group {
                        cfg: cfg_text,
                        checks: Kind::ONCE
                            .iter()
                            .map(|k| Attr::none(cx, ATTR, k.key()))
                            .collect(),
                    });
                    groups.len() - 1
                }
            };
            let mut cfg_key = Attr::none(cx, ATTR, "cfg");
            let mut line = Attr::none(cx, ATTR, "line");
            let mut hot_lines = Attr::none(cx, ATTR, "hot_lines");
            let mut line_checks: Vec<Assertion> = Vec::new();
            let mut any_check = false;
            let parsed = a.parse_nested_meta(|meta| {
                let key = attr::key_name(&meta.path);
                let kind = Kind::ONCE
                    .into_iter()
                    .chain(Kind::LINES)
                    .find(|k| k.key() == key);
                let ident = || meta.path.segments[0].ident.clone();
                match (key.as_str(), kind) {
                    ("crate", _) => {
                        if cfg.is_some() {
                            cx.error_spanned_by(
                                &meta.path,
                                "`crate` holds on every target: write it in a #[layout(...)] \
                                 without `cfg`",
                            );
                        }
                        krate.set_opt(&meta.path, attr::krate(cx, &meta)?);
                    }
                    ("report", _) => {
                        attr::reject_value(cx, &meta)?;
                        let first = !report.is_set();
                        report.set(&meta.path, meta.path.segments[0].ident.span());
                        if first {
                            report_cfg = cfg.clone();
                        }
                        any_check = true;
                    }
                    ("cfg", _) => {
                        if let Some(pred) = parse_cfg(cx, &meta)? {
                            cfg_key.set(&meta.path, pred);
                        }
                    }
                    ("line", _) => {
                        if let Some((lit, n)) = attr::int(cx, &meta)? {
                            if n.is_power_of_two() && n <= attr::MAX_ALIGN {
                                line.set(&meta.path, (meta.path.clone(), n));
                            } else {
                                cx.error_spanned_by(
                                    &lit,
                                    format!(
                                        "`line = {n}` is not a cache-line size: lines are \
                                         powers of two, such as 64 or 128"
                                    ),
                                );
                            }
                        }
                    }
                    ("hot_lines", _) => {
                        if let Some((lit, n)) = attr::int(cx, &meta)? {
                            if n == 0 {
                                cx.error_spanned_by(
                                    &lit,
                                    "`hot_lines = 0` allows no line: a hot set spans at least \
                                     1, the default",
                                );
                            } else {
                                hot_lines.set(&meta.path, (meta.path.clone(), n));
                            }
                        }
                    }
                    (_, Some(kind)) if kind.is_line_check() => {
                        any_check = true;
                        if let Some((fields, span)) = parse_fields(cx, &meta, kind)? {
                            line_checks.push(Assertion {
                                kind,
                                key: ident(),
                                value: None,
                                lines: Some(LineCheck {
                                    fields,
                                    span,
                                    line: DEFAULT_LINE,
                                    hot_lines: 1,
                                }),
                                cfg: cfg.clone(),
                            });
                        }
                    }
                    (_, Some(kind)) => {
                        any_check = true;
                        let value = match kind {
                            Kind::Optimal => {
                                attr::reject_value(cx, &meta)?;
                                Some(None)
                            }
                            Kind::Align => attr::align(cx, &meta)?.map(|(lit, _)| Some(lit)),
                            _ => attr::int(cx, &meta)?.map(|(lit, _)| Some(lit)),
                        };
                        let slot = &mut groups[group].checks[kind as usize];
                        let first = !slot.is_set();
                        slot.set_opt(
                            &meta.path,
                            value.map(|value| Assertion {
                                kind,
                                key: ident(),
                                value,
                                lines: None,
                                cfg: cfg.clone(),
                            }),
                        );
                        if first && slot.is_set() {
                            order.push(Written::Once(group, kind));
                        }
                    }
                    _ => attr::unknown(cx, &meta, ATTR, KEYS)?,
                }
                Ok(())
            });
            if let Err(err) = parsed {
                cx.syn_error(err);
                continue;
            }
            if cfg_key.get().is_some() && !any_check {
                cx.error_spanned_by(
                    a,
                    "`cfg` applies to the checks in its #[layout(...)], and this one has none: \
                     add one, as in `cfg(target_pointer_width = \"64\"), size = 24`",
                );
            }
            let line = line.get();
            let hot_lines = hot_lines.get();
            if let Some((path, _)) = &line
                && line_checks.is_empty()
            {
                cx.error_spanned_by(
                    path,
                    "`line` sets the line size of `hot`, `same_line` and `separate_lines` in \
                     its #[layout(...)], and this one has none",
                );
            }
            if let Some((path, _)) = &hot_lines
                && !line_checks.iter().any(|c| c.kind == Kind::Hot)
            {
                cx.error_spanned_by(
                    path,
                    "`hot_lines` applies to `hot(...)` in its #[layout(...)], and this one has \
                     none: add `hot(a, b)` or remove it",
                );
            }
            for mut check in line_checks {
                let l = check.lines.as_mut().expect("a line check has fields");
                if let Some((_, n)) = line {
                    l.line = n;
                }
                if let Some((_, n)) = hot_lines {
                    l.hot_lines = n;
                }
                order.push(Written::Line(check));
            }
        }
        let mut groups: Vec<Vec<Option<Assertion>>> = groups
            .into_iter()
            .map(|g| g.checks.into_iter().map(Attr::get).collect())
            .collect();
        Container {
            assertions: order
                .into_iter()
                .filter_map(|w| match w {
                    Written::Once(g, k) => groups[g][k as usize].take(),
                    Written::Line(check) => Some(check),
                })
                .collect(),
            report: report.get(),
            report_cfg,
            krate: krate.get(),
        }
    }
}

/// The `cfg(...)` predicate of one attribute, read ahead of its other keys; mistakes are left for
/// the full parse to report.
fn attr_cfg(a: &Attribute) -> Option<TokenStream> {
    let mut found = None;
    let _ = a.parse_nested_meta(|meta| {
        if meta.path.is_ident("cfg") && found.is_none() && meta.input.peek(syn::token::Paren) {
            let content;
            syn::parenthesized!(content in meta.input);
            let pred: TokenStream = content.parse()?;
            if !pred.is_empty() {
                found = Some(pred);
            }
            return Ok(());
        }
        attr::skip_value(meta.input)
    });
    found
}

/// Parses `cfg(predicate)`, keeping the predicate as written for `#[cfg(...)]`.
fn parse_cfg(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<TokenStream>> {
    const HOW: &str = "`cfg` takes a predicate, as in `cfg(target_pointer_width = \"64\")`";
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(&meta.path, HOW);
        attr::skip_value(meta.input)?;
        return Ok(None);
    }
    let content;
    syn::parenthesized!(content in meta.input);
    let pred: TokenStream = content.parse()?;
    if pred.is_empty() {
        cx.error_spanned_by(&meta.path, format!("empty `cfg()`: {HOW}"));
        return Ok(None);
    }
    Ok(Some(pred))
}

/// Parses `(a, b, ...)` after a line check, reporting an empty list, a field named twice and
/// (for `same_line` and `separate_lines`) a count other than two. Whether the names are fields
/// is checked against the struct in `valid`.
fn parse_fields(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    kind: Kind,
) -> syn::Result<Option<(Vec<Member>, Span)>> {
    let key = kind.key();
    let example = if kind == Kind::Hot {
        "hot(pos, vel)"
    } else if kind == Kind::SameLine {
        "same_line(a, b)"
    } else {
        "separate_lines(a, b)"
    };
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            format!("`{key}` takes field names, as in `{example}`"),
        );
        attr::skip_value(meta.input)?;
        return Ok(None);
    }
    let content;
    let paren = syn::parenthesized!(content in meta.input);
    let span = paren.span.join();
    // Taken whole first, so a bad name is one error and the list still closes.
    let tokens: TokenStream = content.parse()?;
    let fields = match Punctuated::<Member, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(list) => list.into_iter().collect::<Vec<_>>(),
        Err(err) => {
            cx.syn_error(syn::Error::new(
                err.span(),
                format!("`{key}` takes field names, as in `{example}`"),
            ));
            return Ok(None);
        }
    };
    let mut ok = true;
    if fields.is_empty() {
        cx.error_at(
            span,
            format!("`{key}()` names no fields: list them, as in `{example}`"),
        );
        return Ok(None);
    }
    for (i, f) in fields.iter().enumerate() {
        if fields[..i].iter().any(|g| member_name(g) == member_name(f)) {
            cx.error_spanned_by(
                f,
                format!("`{}` is named twice in `{key}(...)`", member_name(f)),
            );
            ok = false;
        }
    }
    if kind != Kind::Hot && fields.len() != 2 {
        cx.error_at(
            span,
            format!(
                "`{key}` compares two fields, as in `{example}`, and this names {}{}",
                fields.len(),
                if fields.len() > 2 && kind == Kind::SameLine {
                    "; for more, use `hot(...)`"
                } else {
                    ""
                }
            ),
        );
        ok = false;
    }
    Ok(ok.then_some((fields, span)))
}

impl Field {
    /// Reports any `#[layout(...)]` on a field: it would be silently ignored.
    pub fn from_ast(cx: &Ctxt, field: &syn::Field) -> Self {
        for a in field.attrs.iter().filter(|a| a.path().is_ident(ATTR)) {
            cx.error_spanned_by(a, "#[layout(...)] goes on the struct, not on a field");
        }
        Field
    }
}
