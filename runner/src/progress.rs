//! The progress of a long run on stderr, for `run` and `mutants`: how many of how many are done,
//! the time gone and an estimate of the time left, the counts so far, and what is in flight with
//! how long each has waited, so that a run waiting out a timeout never looks hung.
//!
//! Two displays ([`Display`]): on a terminal, a live bar ([`indicatif`]) redrawn every second
//! with a line per item in flight; elsewhere (a CI log, a redirected stderr), one plain line
//! every `--progress-interval` seconds (60 by default), and none at all for a run shorter than
//! that. Nothing of it goes to stdout, which keeps the run's own account; while the bar is shown,
//! lines for stdout go through [`Progress::suspend`] so that the two never garble each other.
//!
//! Names shown here (case ids, mutant names) are escaped: a control character never reaches the
//! terminal.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How many of the items in flight are named (the longest-waiting first); the rest are counted.
const SHOWN_IN_FLIGHT: usize = 4;

/// Which display a run uses (`--progress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// The bar when stderr is a terminal, else the plain lines.
    Auto,
    /// The live bar (when stderr is not a terminal, the plain lines instead).
    Bar,
    /// A plain line every `--progress-interval` seconds.
    Lines,
    /// Nothing.
    Off,
}

/// A display decided for this process: [`Mode`] with stderr looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Display {
    Bar,
    Lines(Duration),
    Off,
}

impl Display {
    /// `mode` on this process's stderr, with plain lines every `interval`.
    pub fn choose(mode: Mode, interval: Duration) -> Display {
        match mode {
            Mode::Off => Display::Off,
            Mode::Auto | Mode::Bar if std::io::stderr().is_terminal() => Display::Bar,
            _ => Display::Lines(interval),
        }
    }
}

/// The progress of one run: cheap to clone, and shared by the threads that start and finish
/// items. Dropping the last clone (or [`Progress::close`]) ends the display.
#[derive(Clone)]
pub struct Progress {
    inner: Option<Arc<Inner>>,
}

struct Inner {
    /// What the items are, plural ("cases", "mutants").
    noun: &'static str,
    total: usize,
    began: Instant,
    state: Mutex<State>,
    wake: Condvar,
    bar: Option<ProgressBar>,
    /// Where the plain lines go (stderr, or a test's buffer).
    lines: Mutex<Box<dyn Write + Send>>,
    ticker: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Default)]
struct State {
    done: usize,
    /// Finished items by how they ended, in the words the caller gave.
    counts: BTreeMap<&'static str, usize>,
    /// Items in flight by key: name and start.
    in_flight: BTreeMap<usize, (String, Instant)>,
    closed: bool,
}

impl Progress {
    /// No display at all.
    pub fn off() -> Progress {
        Progress { inner: None }
    }

    /// A display of `total` items called `noun`, on stderr.
    pub fn start(display: Display, noun: &'static str, total: usize) -> Progress {
        Progress::start_to(display, noun, total, Box::new(std::io::stderr()))
    }

    /// As [`Progress::start`], the plain lines written to `lines` (the bar always draws on
    /// stderr).
    pub fn start_to(
        display: Display,
        noun: &'static str,
        total: usize,
        lines: Box<dyn Write + Send>,
    ) -> Progress {
        let (bar, tick) = match display {
            Display::Off => return Progress::off(),
            Display::Bar => (Some(bar(total)), Duration::from_secs(1)),
            Display::Lines(every) => (None, every.max(Duration::from_millis(10))),
        };
        let inner = Arc::new(Inner {
            noun,
            total,
            began: Instant::now(),
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            bar,
            lines: Mutex::new(lines),
            ticker: Mutex::new(None),
        });
        let ticking = Arc::clone(&inner);
        let handle = std::thread::spawn(move || ticking.tick_every(tick));
        *lock(&inner.ticker) = Some(handle);
        // The bar first shows when an item starts: what the run prints before (its header)
        // comes first.
        Progress { inner: Some(inner) }
    }

    /// Whether the live bar is shown (stdout's own marks are then left out when stdout is the
    /// same terminal).
    pub fn is_bar(&self) -> bool {
        self.inner.as_ref().is_some_and(|i| i.bar.is_some())
    }

    /// Item `key` (unique among those in flight) called `name` has started.
    pub fn started(&self, key: usize, name: &str) {
        if let Some(i) = &self.inner {
            lock(&i.state)
                .in_flight
                .insert(key, (escape(name), Instant::now()));
            i.draw();
        }
    }

    /// Item `key` has ended, as `how` ("passed", "failed", ...).
    pub fn finished(&self, key: usize, how: &'static str) {
        if let Some(i) = &self.inner {
            {
                let mut s = lock(&i.state);
                s.in_flight.remove(&key);
                s.done += 1;
                *s.counts.entry(how).or_default() += 1;
            }
            i.draw();
        }
    }

    /// Runs `f` (which prints to stdout) with the bar cleared from the terminal, and draws it
    /// again after.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match self.inner.as_ref().and_then(|i| i.bar.as_ref()) {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    /// Ends the display: the bar is cleared, no more lines are written. Idempotent.
    pub fn close(&self) {
        if let Some(i) = &self.inner {
            lock(&i.state).closed = true;
            i.wake.notify_all();
            if let Some(handle) = lock(&i.ticker).take() {
                let _ = handle.join();
            }
            if let Some(bar) = &i.bar {
                bar.finish_and_clear();
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // The ticker holds one reference: the last user's drop ends it.
        if self
            .inner
            .as_ref()
            .is_some_and(|i| Arc::strong_count(i) == 2)
        {
            self.close();
        }
    }
}

impl Inner {
    /// The ticker's loop: every `every`, the bar is redrawn or a plain line written, until the
    /// display is closed.
    fn tick_every(&self, every: Duration) {
        let mut state = lock(&self.state);
        loop {
            // Looked at under the lock before each wait, so a close is never missed.
            if state.closed {
                return;
            }
            state = match self.wake.wait_timeout(state, every) {
                Ok((s, _)) => s,
                Err(poisoned) => poisoned.into_inner().0,
            };
            if state.closed {
                return;
            }
            let line = self.describe(&state);
            drop(state);
            match &self.bar {
                Some(bar) => set_bar(bar, &line),
                None => {
                    let mut out = lock(&self.lines);
                    let _ = writeln!(out, "progress: {}", line.one_line());
                    let _ = out.flush();
                }
            }
            state = lock(&self.state);
        }
    }

    /// Redraws the bar now (the plain lines wait for their tick).
    fn draw(&self) {
        if let Some(bar) = &self.bar {
            let line = self.describe(&lock(&self.state));
            set_bar(bar, &line);
        }
    }

    fn describe(&self, s: &State) -> Line {
        let elapsed = self.began.elapsed();
        // No estimate once every item left is in flight: their waits say more.
        let left = (s.done > 0 && self.total - s.done > s.in_flight.len()).then(|| {
            let per = elapsed.as_secs_f64() / s.done as f64;
            Duration::from_secs_f64(per * (self.total - s.done) as f64)
        });
        let counts: Vec<String> = s.counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let mut waiting: Vec<(&String, Duration)> = s
            .in_flight
            .values()
            .map(|(name, since)| (name, since.elapsed()))
            .collect();
        waiting.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        Line {
            noun: self.noun,
            done: s.done,
            total: self.total,
            elapsed,
            left,
            counts,
            waiting: waiting
                .iter()
                .take(SHOWN_IN_FLIGHT)
                .map(|(n, d)| ((*n).clone(), *d))
                .collect(),
            more: waiting.len().saturating_sub(SHOWN_IN_FLIGHT),
        }
    }
}

/// What one redraw or one plain line says.
struct Line {
    noun: &'static str,
    done: usize,
    total: usize,
    elapsed: Duration,
    left: Option<Duration>,
    counts: Vec<String>,
    waiting: Vec<(String, Duration)>,
    more: usize,
}

impl Line {
    /// "412 of 996 cases after 3 min 12 s, about 4 min left (400 passed, 2 failed); in flight:
    /// a.b for 45 s, c.d for 12 s".
    fn one_line(&self) -> String {
        let noun = if self.total == 1 {
            self.noun.trim_end_matches('s')
        } else {
            self.noun
        };
        let mut text = format!(
            "{} of {} {noun} after {}",
            self.done,
            self.total,
            duration(self.elapsed)
        );
        if let Some(left) = self.left {
            text.push_str(&format!(", about {} left", duration(left)));
        }
        if !self.counts.is_empty() {
            text.push_str(&format!(" ({})", self.counts.join(", ")));
        }
        if !self.waiting.is_empty() {
            let named: Vec<String> = self
                .waiting
                .iter()
                .map(|(n, d)| format!("{n} for {}", duration(*d)))
                .collect();
            text.push_str(&format!("; in flight: {}", named.join(", ")));
            if self.more > 0 {
                text.push_str(&format!(" and {} more", self.more));
            }
        }
        text
    }

    /// The bar's message: the counts, then a line per item in flight.
    fn message(&self) -> String {
        let mut text = self.counts.join(", ");
        if let Some(left) = self.left {
            text.push_str(&format!("  about {} left", duration(left)));
        }
        for (name, waited) in &self.waiting {
            text.push_str(&format!("\n  {:>6}  {name}", duration(*waited)));
        }
        if self.more > 0 {
            text.push_str(&format!("\n          and {} more in flight", self.more));
        }
        text
    }
}

fn bar(total: usize) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    // A template of this module's own: it parses.
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {prefix}  {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

fn set_bar(bar: &ProgressBar, line: &Line) {
    bar.set_position(line.done as u64);
    bar.set_prefix(line.noun);
    bar.set_message(line.message());
}

/// "3 min 12 s", "45 s", "1 h 2 min".
fn duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}

/// `name` with control and format characters escaped, so that nothing shown moves the cursor or
/// reorders text.
fn escape(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}') {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer the plain lines are written to, readable by the test.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            lock(&self.0).extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8_lossy(&lock(&self.0)).into_owned()
        }
    }

    #[test]
    fn plain_lines_name_what_is_in_flight_and_how_long_it_waited() {
        let buf = Shared::default();
        let p = Progress::start_to(
            Display::Lines(Duration::from_millis(300)),
            "cases",
            3,
            Box::new(buf.clone()),
        );
        p.started(0, "a.first");
        p.finished(0, "passed");
        p.started(1, "b.hangs\u{1b}[2J");
        std::thread::sleep(Duration::from_millis(1_400));
        p.close();
        let text = buf.text();
        let last = text.lines().last().unwrap_or_default().to_owned();
        assert!(
            last.starts_with("progress: 1 of 3 cases after 1 s"),
            "{text}"
        );
        assert!(last.contains("about "), "{last}");
        assert!(last.contains("(1 passed)"), "{last}");
        assert!(
            last.contains("in flight: b.hangs\\u{1b}[2J for 1 s"),
            "{last}"
        );
        assert!(!text.contains('\u{1b}'), "{text}");
        let lines = text.lines().count();
        assert!((3..=5).contains(&lines), "{lines} lines: {text}");
        // Closed: no line after.
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(buf.text().lines().count(), lines);
    }

    #[test]
    fn a_run_shorter_than_the_interval_writes_nothing() {
        let buf = Shared::default();
        let p = Progress::start_to(
            Display::Lines(Duration::from_secs(60)),
            "cases",
            2,
            Box::new(buf.clone()),
        );
        p.started(0, "a");
        p.finished(0, "failed");
        drop(p);
        assert_eq!(buf.text(), "");
    }

    #[test]
    fn many_in_flight_are_counted_beyond_the_longest_waiting() {
        let buf = Shared::default();
        let p = Progress::start_to(
            Display::Lines(Duration::from_millis(200)),
            "mutants",
            10,
            Box::new(buf.clone()),
        );
        for k in 0..6 {
            p.started(k, &format!("m{k}"));
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(500));
        p.close();
        let text = buf.text();
        let last = text.lines().last().unwrap_or_default();
        // The four that waited longest, longest first, then the count of the rest.
        assert!(
            last.contains("in flight: m0 for 0 s, m1 for 0 s, m2 for 0 s, m3 for 0 s and 2 more"),
            "{last}"
        );
    }

    #[test]
    fn durations_read_as_words() {
        assert_eq!(duration(Duration::from_secs(45)), "45 s");
        assert_eq!(duration(Duration::from_secs(192)), "3 min 12 s");
        assert_eq!(duration(Duration::from_secs(3720)), "1 h 2 min");
    }
}
