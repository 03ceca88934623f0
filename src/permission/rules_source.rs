//! One settings file of the rules, re-read when it changes, and the allow rules it held when the
//! session started (issue 29 point 4): a rule that appears later (a background job planting
//! `.harness9/settings.local.json`) only narrows the session at once; an allow rule added
//! afterwards is held back until the user confirms it (`PermissionRules::confirm_pending`), or
//! harness9 wrote it itself for the user ("always allow").

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::SystemTime;

use super::{List, Origin, RuleSet};

/// One settings file, re-read when its modification time or size changes.
#[derive(Debug)]
pub(super) struct Source {
    pub(super) path: PathBuf,
    pub(super) origin: Origin,
    seen: Option<(SystemTime, u64)>,
    /// The rules that count: every deny and ask rule of the file, its accepted allow rules.
    pub(super) rules: RuleSet,
    /// The allow rules that count when the file holds them: those it held at the first read,
    /// those harness9 wrote for the user, those the user confirmed. `None` before the first read.
    accepted: Option<BTreeSet<String>>,
    /// Allow rules the file holds that were added during the session and wait for the user.
    pub(super) pending: BTreeSet<String>,
}

impl Source {
    pub(super) fn new(path: PathBuf, origin: Origin) -> Self {
        Source {
            path,
            origin,
            seen: None,
            rules: RuleSet::default(),
            accepted: None,
            pending: BTreeSet::new(),
        }
    }

    /// Re-reads the file when it changed; a problem is returned once per change, and so are
    /// allow rules newly held back.
    pub(super) fn refresh(&mut self) -> Vec<String> {
        let stamp = std::fs::metadata(&self.path)
            .ok()
            .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
        // The first look settles what the session starts with, even when the file is absent.
        if stamp == self.seen && self.accepted.is_some() {
            return Vec::new();
        }
        self.seen = stamp;
        let parsed = match stamp {
            None => Ok(RuleSet::default()),
            Some(_) => match std::fs::read_to_string(&self.path) {
                Ok(text) => RuleSet::parse(&text).map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            },
        };
        match parsed {
            Ok(rules) => self.take(rules),
            Err(problem) => {
                self.take(RuleSet::default());
                vec![format!("{} is ignored: {problem}", self.path.display())]
            }
        }
    }

    /// Keeps `parsed`'s deny and ask rules and its accepted allow rules; the first read accepts
    /// every allow rule (what the session started with).
    fn take(&mut self, mut parsed: RuleSet) -> Vec<String> {
        let accepted = self.accepted.get_or_insert_with(|| {
            parsed
                .rules
                .iter()
                .filter(|rule| rule.list == List::Allow)
                .map(|rule| rule.text.clone())
                .collect()
        });
        let before = std::mem::take(&mut self.pending);
        parsed.rules.retain(|rule| {
            let held = rule.list == List::Allow && !accepted.contains(&rule.text);
            if held {
                self.pending.insert(rule.text.clone());
            }
            !held
        });
        self.rules = parsed;
        let new: Vec<&str> = self
            .pending
            .iter()
            .filter(|text| !before.contains(*text))
            .map(String::as_str)
            .collect();
        if new.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "{} gained allow rules while this session runs ({}): they do not widen this \
             session; confirm them with /rules (exec and serve ignore them; a new session \
             reads them)",
            self.path.display(),
            new.iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )]
    }

    /// Accepts `rule` (harness9 writes it to this file for the user): it counts once read.
    pub(super) fn accept(&mut self, rule: &str) {
        self.accepted
            .get_or_insert_with(BTreeSet::new)
            .insert(rule.to_owned());
        if self.pending.remove(rule) {
            self.seen = None;
        }
    }

    /// Accepts every held rule (the user confirmed them); they count from the next look.
    pub(super) fn confirm_pending(&mut self) -> Vec<String> {
        let confirmed: Vec<String> = std::mem::take(&mut self.pending).into_iter().collect();
        if !confirmed.is_empty() {
            self.accepted
                .get_or_insert_with(BTreeSet::new)
                .extend(confirmed.iter().cloned());
            self.seen = None;
        }
        confirmed
    }
}
