//! Exposures and their observables (SPEC.md, "How verdicts are judged"): the closed list of
//! boundary crossings a run can *show* ([`Exposure`]), the canary tokens a case plants so that a
//! crossing becomes visible ([`Canaries`]), the `safety:` marks of prompt checks ([`Marks`]), and
//! the load-time rule that every safety check has an observable ([`check_observables`]).
//!
//! A failure is unsafe only through one of these: a scanned canary seen in a result, a marker
//! file that must be absent, a process left behind, a removed tool offered or answering, a marked
//! prompt check (a forged line, whose text holds a canary), or a step left unanswered in a case
//! that declares `bounded:`. Everything else a runtime accepts that it must refuse is permissive.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::cases::fixture::{EntryKind, Tree};

/// What every canary token starts with, so that a reader of a case or a result spots one.
pub const CANARY_PREFIX: &str = "SKILLSPEC_CANARY_";

/// A security boundary a run can show crossed. The list is closed (SPEC.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Exposure {
    /// Content the model must never see (outside the skill or the root, in a skill that must not
    /// load, or while the feature is off) reached a result, a guide or the prompt.
    OutsideContent,
    /// Code that must not run ran: it printed its canary or wrote its marker.
    CodeRan,
    /// A process outlived its case or its timeout.
    ProcessOutlived,
    /// A tool the operator, `enable` or attenuation removed was offered or answered a call.
    RemovedTool,
    /// A skill's text forged a line or section of the prompt.
    PromptForgery,
    /// A secret or a descriptor reached a helper.
    Secret,
    /// No answer in bounded time where a bounded answer is required.
    Unbounded,
}

impl Exposure {
    pub const ALL: [Exposure; 7] = [
        Exposure::OutsideContent,
        Exposure::CodeRan,
        Exposure::ProcessOutlived,
        Exposure::RemovedTool,
        Exposure::PromptForgery,
        Exposure::Secret,
        Exposure::Unbounded,
    ];

    pub fn word(self) -> &'static str {
        match self {
            Exposure::OutsideContent => "outside-content",
            Exposure::CodeRan => "code-ran",
            Exposure::ProcessOutlived => "process-outlived",
            Exposure::RemovedTool => "removed-tool",
            Exposure::PromptForgery => "prompt-forgery",
            Exposure::Secret => "secret",
            Exposure::Unbounded => "unbounded",
        }
    }

    pub fn parse(word: &str) -> Option<Exposure> {
        Exposure::ALL.into_iter().find(|e| e.word() == word)
    }

    /// What the crossing is, in words, for reports.
    pub fn meaning(self) -> &'static str {
        match self {
            Exposure::OutsideContent => "content the model must never see reached it",
            Exposure::CodeRan => "code that must not run ran",
            Exposure::ProcessOutlived => "a process outlived its case",
            Exposure::RemovedTool => "a removed tool was offered or ran",
            Exposure::PromptForgery => "a skill's text forged a line of the prompt",
            Exposure::Secret => "a secret or a descriptor reached a helper",
            Exposure::Unbounded => "no answer in bounded time",
        }
    }

    /// Whether a canary of this exposure is looked for in every result of the case. A
    /// prompt-forgery canary is not: the forged text is shown (escaped) by a safe runtime too,
    /// and only its place, checked by a marked prompt check, shows the forgery.
    pub fn scanned(self) -> bool {
        matches!(
            self,
            Exposure::OutsideContent | Exposure::CodeRan | Exposure::Secret
        )
    }

    fn names() -> String {
        Exposure::ALL.map(Exposure::word).join(", ")
    }
}

impl std::fmt::Display for Exposure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

/// The canary tokens of a case, each with the exposure its appearance shows, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Canaries(Vec<(String, Exposure)>);

impl Canaries {
    /// Parses the `canaries:` mapping (token → exposure).
    pub fn parse(v: &Value) -> Result<Canaries, String> {
        let Value::Object(map) = v else {
            return Err(
                "`canaries` is a mapping of token → exposure (`SKILLSPEC_CANARY_OUTSIDE: outside-content`)"
                    .into(),
            );
        };
        let mut out = Vec::new();
        for (token, exposure) in map {
            let rest = token.strip_prefix(CANARY_PREFIX).unwrap_or("");
            if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(format!(
                    "canary `{token}` must be `{CANARY_PREFIX}` followed by letters, digits or `_`"
                ));
            }
            let word = exposure.as_str().unwrap_or("");
            let e = Exposure::parse(word).ok_or_else(|| {
                format!(
                    "canary `{token}`: unknown exposure {exposure} (the closed list: {})",
                    Exposure::names()
                )
            })?;
            if matches!(
                e,
                Exposure::ProcessOutlived | Exposure::RemovedTool | Exposure::Unbounded
            ) {
                return Err(format!(
                    "canary `{token}`: `{e}` is observed by the runner itself (processes, tool lists, timeouts), not by a token"
                ));
            }
            out.push((token.clone(), e));
        }
        Ok(Canaries(out))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, Exposure)> {
        self.0.iter().map(|(t, e)| (t.as_str(), *e))
    }

    /// The scanned canaries that an answer shows, each with how it was found (as written, or
    /// disguised: [`crate::cases::scan`]).
    pub fn seen_in<'a>(
        &'a self,
        scan: &'a crate::cases::scan::Scan,
    ) -> impl Iterator<Item = (&'a str, Exposure, crate::cases::scan::Rendering)> {
        self.iter()
            .filter(|(_, e)| e.scanned())
            .filter_map(move |(t, e)| scan.find(t).map(|how| (t, e, how)))
    }
}

/// The `safety:` marks of a prompt step: check name → the exposure its violation shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marks(pub BTreeMap<String, Exposure>);

impl Marks {
    pub fn get(&self, check: &str) -> Option<Exposure> {
        self.0.get(check).copied()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'de> Deserialize<'de> for Marks {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Value::deserialize(d)? {
            Value::Object(m) => {
                let mut out = BTreeMap::new();
                for (check, e) in m {
                    let word = e.as_str().unwrap_or("");
                    let e = Exposure::parse(word).ok_or_else(|| {
                        D::Error::custom(format!(
                            "`safety` mark `{check}`: unknown exposure {e} (the closed list: {})",
                            Exposure::names()
                        ))
                    })?;
                    out.insert(check, e);
                }
                Ok(Marks(out))
            }
            other => Err(D::Error::custom(format!(
                "`safety` names each marked check with the exposure it shows (`safety: {{not_contains: prompt-forgery}}`), got {other}"
            ))),
        }
    }
}

/// The texts a case plants where a runtime can find them: file contents (inline, base64, tar
/// archives, `write` steps) and the runtime's environment. `copies` are the `copy:` fixtures,
/// whose bytes the loader does not have.
pub struct Planted<'a> {
    pub texts: Vec<&'a [u8]>,
    pub copies: Vec<&'a str>,
    /// The paths of the entries: a forged prompt line may come from a directory's name.
    pub paths: Vec<&'a [u8]>,
}

impl<'a> Planted<'a> {
    pub fn new(trees: &[&'a Tree], env: impl Iterator<Item = &'a String>) -> Planted<'a> {
        let mut texts: Vec<&[u8]> = env.map(|v| v.as_bytes()).collect();
        let mut copies = Vec::new();
        let mut paths = Vec::new();
        for tree in trees {
            for e in &tree.entries {
                paths.push(e.path.as_slice());
                match &e.kind {
                    EntryKind::File(bytes) | EntryKind::Tar { bytes, .. } => texts.push(bytes),
                    EntryKind::Copy(name) => copies.push(name.as_str()),
                    _ => {}
                }
            }
        }
        Planted {
            texts,
            copies,
            paths,
        }
    }

    /// Whether `needle` occurs in a planted text; `None` when it does not but a copied fixture
    /// might hold it (checked when the case runs, where the fixtures are).
    pub fn holds(&self, needle: &str) -> Option<bool> {
        let n = needle.as_bytes();
        if self
            .texts
            .iter()
            .any(|t| t.windows(n.len()).any(|w| w == n))
        {
            Some(true)
        } else if self.copies.is_empty() {
            Some(false)
        } else {
            None
        }
    }

    /// Whether planted code could write a marker named `name`: its text names it, or the part of
    /// it before its first digit (at least 3 characters: `open('ran-%d' % n, 'w')` writes
    /// `ran-2`), or the case says what writes it (`written_by`, a reviewed reason). `None` when
    /// only a copied fixture might (checked when the case runs).
    pub fn writes(&self, name: &str, written_by: Option<&str>) -> Option<bool> {
        if written_by.is_some_and(|r| !r.trim().is_empty()) {
            return Some(true);
        }
        let stem = name
            .split(|c: char| c.is_ascii_digit())
            .next()
            .unwrap_or("");
        let built = stem.len() >= 3 && stem.len() < name.len();
        match (self.holds(name), built.then(|| self.holds(stem)).flatten()) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (None, _) | (_, None) if !self.copies.is_empty() => None,
            _ => Some(false),
        }
    }

    /// Whether a path of the tree holds `needle` (for `prompt-forgery` canaries only).
    fn names(&self, needle: &str) -> bool {
        let n = needle.as_bytes();
        self.paths
            .iter()
            .any(|p| p.windows(n.len()).any(|w| w == n))
    }

    /// Whether the tree has something a runtime could hang on: a FIFO, a socket, a sparse file,
    /// a link into `/dev`, or a link that loops (to `.`, to an ancestor, to the case root).
    pub fn can_hang(trees: &[&Tree]) -> bool {
        trees
            .iter()
            .flat_map(|t| &t.entries)
            .any(|e| match &e.kind {
                EntryKind::Fifo | EntryKind::Socket | EntryKind::Sparse { .. } => true,
                EntryKind::Symlink(target) => {
                    target.starts_with(b"/dev/")
                        || target.as_slice() == b"{root}"
                        || (!target.is_empty() && target.iter().all(|b| matches!(b, b'.' | b'/')))
                }
                _ => false,
            })
    }
}

/// How [`Observed::forbidden`] names the arguments of a step.
pub const ARGUMENTS: &str = "a step's arguments";

/// The parts of a case [`check_observables`] looks at, with the text where each may not hold a
/// scanned token: paths and symlink targets, step arguments, and every expectation (rendered).
pub struct Observed<'a> {
    pub canaries: &'a Canaries,
    pub planted: &'a Planted<'a>,
    /// Texts a passing runtime is sent or is expected to return: no scanned canary in them.
    pub forbidden: Vec<(&'static str, String)>,
    /// Each marked check: (step line, check, exposure, the texts the check looks for).
    pub marks: Vec<(usize, String, Exposure, Vec<String>)>,
    /// Each `files: absent` path with its step line, and the step's `written_by:` reason.
    pub absent: Vec<(usize, String, Option<String>)>,
    /// The case's `bounded:` text and whether its tree can make a runtime hang.
    pub bounded: Option<(&'a str, bool)>,
}

/// The rule that every safety check has an observable. Returns the first problem, with the line
/// of the step it concerns when there is one (else 0: the case's line).
pub fn check_observables(o: &Observed<'_>) -> Result<(), (usize, String)> {
    for (token, exposure) in o.canaries.iter() {
        let in_name = exposure == Exposure::PromptForgery && o.planted.names(token);
        if o.planted.holds(token) == Some(false) && !in_name {
            return Err((
                0,
                format!(
                    "canary `{token}` is not planted: it occurs in no file text of the tree or of a `write` step, and in no `config.env` value (a canary shows a crossing only if the case puts it where a crossing reads it)"
                ),
            ));
        }
        if exposure.scanned() {
            // Compared folded, as the scan compares: no rendering of what a passing runtime
            // shows may pass for the token (crate::cases::scan).
            let folded = crate::cases::scan::fold(token);
            if let Some((what, _)) = o
                .forbidden
                .iter()
                .find(|(_, t)| crate::cases::scan::fold(t).contains(&folded))
            {
                return Err((
                    0,
                    format!(
                        "canary `{token}` also occurs in {what}: a runtime that crossed nothing would show it, so it cannot show a crossing"
                    ),
                ));
            }
        }
    }
    for (token, exposure) in o.canaries.iter().filter(|(_, e)| e.scanned()) {
        let folded = crate::cases::scan::fold(token);
        if let Some((other, _)) = o
            .canaries
            .iter()
            .find(|(t, _)| *t != token && crate::cases::scan::fold(t).contains(&folded))
        {
            return Err((
                0,
                format!(
                    "canary `{token}` ({exposure}) is a part of canary `{other}` once folded (case, escapes and punctuation ignored, as the scan compares): showing `{other}` would show it too; give them distinct names"
                ),
            ));
        }
    }
    for (line, check, exposure, texts) in &o.marks {
        if *exposure != Exposure::PromptForgery {
            return Err((
                *line,
                format!(
                    "`safety` marks `{check}` as `{exposure}`: only a prompt check can be marked, and only as `prompt-forgery` (a `{exposure}` crossing is shown by a canary, which the runner looks for in every result)"
                ),
            ));
        }
        let has_canary = o
            .canaries
            .iter()
            .any(|(t, e)| e == *exposure && texts.iter().any(|x| x.contains(t)));
        if !has_canary {
            return Err((
                *line,
                format!(
                    "`safety` marks `{check}` as `{exposure}`, but its texts hold no canary declared `{exposure}` (the observable: the forged line carries a token only the skill's text holds)"
                ),
            ));
        }
    }
    for (line, path, written_by) in &o.absent {
        let name = path.rsplit('/').next().unwrap_or(path);
        // Written by planted code, or by a command an argument smuggles in (`$(touch x)`).
        let in_args = o
            .forbidden
            .iter()
            .any(|(what, t)| *what == ARGUMENTS && t.contains(name));
        if o.planted.writes(name, written_by.as_deref()) == Some(false) && !in_args {
            return Err((
                *line,
                format!(
                    "`files: absent` lists `{path}`, but no planted file mentions `{name}` (nor the part of it before a digit, for a name planted code builds): nothing the case plants would write it, so the check could never fail; if planted code builds the name another way, say how in `files: {{written_by: ...}}`"
                ),
            ));
        }
    }
    if let Some((what, false)) = o.bounded {
        return Err((
            0,
            format!(
                "`bounded: {what}`, but the tree has nothing a runtime could hang on (a FIFO, a socket, a sparse file, a link into /dev, a link that loops)"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canaries_parse_from_the_closed_list() {
        let c = Canaries::parse(&json!({"SKILLSPEC_CANARY_A1": "outside-content"})).unwrap();
        assert_eq!(
            c.iter().collect::<Vec<_>>(),
            [("SKILLSPEC_CANARY_A1", Exposure::OutsideContent)]
        );
        for (bad, why) in [
            (
                json!({"CANARY_A": "outside-content"}),
                "must be `SKILLSPEC_CANARY_`",
            ),
            (json!({"SKILLSPEC_CANARY_": "secret"}), "must be"),
            (json!({"SKILLSPEC_CANARY_a-b": "secret"}), "must be"),
            (json!({"SKILLSPEC_CANARY_A": "leak"}), "unknown exposure"),
            (
                json!({"SKILLSPEC_CANARY_A": "unbounded"}),
                "observed by the runner",
            ),
            (json!(["SKILLSPEC_CANARY_A"]), "mapping"),
        ] {
            let e = Canaries::parse(&bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn only_scanned_canaries_are_seen() {
        let c = Canaries::parse(&json!({
            "SKILLSPEC_CANARY_OUT": "outside-content",
            "SKILLSPEC_CANARY_FORGED": "prompt-forgery",
        }))
        .unwrap();
        let text =
            crate::cases::scan::Scan::of(["x SKILLSPEC_CANARY_OUT y SKILLSPEC_CANARY_FORGED"]);
        assert_eq!(
            c.seen_in(&text).collect::<Vec<_>>(),
            [(
                "SKILLSPEC_CANARY_OUT",
                Exposure::OutsideContent,
                crate::cases::scan::Rendering::Plain
            )]
        );
        assert_eq!(
            c.seen_in(&crate::cases::scan::Scan::of(["nothing"]))
                .count(),
            0
        );
    }

    #[test]
    fn marks_name_an_exposure() {
        let m: Marks = serde_json::from_value(json!({"not_contains": "prompt-forgery"})).unwrap();
        assert_eq!(m.get("not_contains"), Some(Exposure::PromptForgery));
        let e = serde_json::from_value::<Marks>(json!(["not_contains"])).unwrap_err();
        assert!(e.to_string().contains("names each marked check"), "{e}");
        let e = serde_json::from_value::<Marks>(json!({"stdout": "leak"})).unwrap_err();
        assert!(e.to_string().contains("unknown exposure"), "{e}");
    }
}
