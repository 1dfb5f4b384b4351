//! The Rust side of `.ci/yaml-conformance`.
//!
//! `yaml_conformance decide` reads JSON lines `{"id","text"}` on stdin and writes the reference
//! reader's decision on each as JSON lines (the shape of
//! `skillspec_reference::yaml::conformance::Decision`).
//!
//! `yaml_conformance compare --side suite|js --inputs FILE --theirs FILE [--suite FILE]
//! [--label NAME]` decides every input, compares with the other side's decisions (with
//! `--suite`, the suite's expectations for the same inputs break ties: see
//! `conformance::run`), prints every difference and the counts, and exits 0 only when no difference is outside the accepted list; 1 on an unexpected
//! difference; 2 on a usage or data error (missing, unreadable or mismatched data).

use std::io::{BufRead, Write};
use std::process::ExitCode;

use skillspec_reference::yaml::conformance::{self, Decision, Input, Side};

fn main() -> ExitCode {
    match real_main() {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("yaml_conformance: {msg}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<ExitCode, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("decide") if args.len() == 1 => decide(),
        Some("compare") => compare(&args[1..]),
        _ => Err(
            "usage: yaml_conformance decide < inputs.jsonl\n       yaml_conformance compare \
             --side suite|js --inputs FILE --theirs FILE [--suite FILE] [--label NAME]"
                .to_owned(),
        ),
    }
}

fn decide() -> Result<ExitCode, String> {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for (i, line) in stdin.lock().lines().enumerate() {
        let line = line.map_err(|e| format!("stdin: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let input: Input =
            serde_json::from_str(&line).map_err(|e| format!("stdin line {}: {e}", i + 1))?;
        let decision = conformance::decide(&input.id, &input.text);
        let json = serde_json::to_string(&decision).map_err(|e| e.to_string())?;
        writeln!(out, "{json}").map_err(|e| format!("stdout: {e}"))?;
    }
    out.flush().map_err(|e| format!("stdout: {e}"))?;
    Ok(ExitCode::SUCCESS)
}

fn compare(args: &[String]) -> Result<ExitCode, String> {
    let mut side = None;
    let mut inputs = None;
    let mut theirs = None;
    let mut label = None;
    let mut suite = None;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("`{flag}` needs a value"))?;
        match flag.as_str() {
            "--side" => side = Some(value.parse::<Side>()?),
            "--inputs" => inputs = Some(value.clone()),
            "--theirs" => theirs = Some(value.clone()),
            "--label" => label = Some(value.clone()),
            "--suite" => suite = Some(value.clone()),
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    let side = side.ok_or("`--side` is required")?;
    let inputs_path = inputs.ok_or("`--inputs` is required")?;
    let theirs_path = theirs.ok_or("`--theirs` is required")?;
    let label = label.unwrap_or_else(|| format!("{side:?}"));
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
    let inputs: Vec<Input> = conformance::read_json_lines(&read(&inputs_path)?, &inputs_path)?;
    let theirs: Vec<Decision> = conformance::read_json_lines(&read(&theirs_path)?, &theirs_path)?;
    let suite: Option<Vec<Decision>> = match &suite {
        Some(p) => Some(conformance::read_json_lines(&read(p)?, p)?),
        None => None,
    };
    let tally = conformance::run(side, &inputs, &theirs, suite.as_deref())?;
    for (id, text, diffs) in &tally.unexpected {
        println!("UNEXPECTED {label} {id}: text {text:?}");
        for d in diffs {
            match d.class {
                Some(c) => println!("    {} [accepted: {c}]", d.what),
                None => println!("    {}", d.what),
            }
        }
    }
    println!(
        "{label}: {} run, {} agreed ({} accepted by both, {} refused by both), {} with accepted \
         differences, {} with unexpected differences",
        tally.run,
        tally.agreed,
        tally.agreed_accepted,
        tally.agreed - tally.agreed_accepted,
        tally.accepted_texts,
        tally.unexpected.len()
    );
    for (class, n) in &tally.accepted {
        println!("{label}:   accepted `{class}`: {n}");
    }
    Ok(if tally.unexpected.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
