//! Serving an [`Implementation`] over the adapter protocol on a reader/writer pair. This is what
//! `skillspec adapter` runs (with the reference), and it doubles as a worked example of the
//! protocol for adapter authors.
//!
//! A request line it cannot take (not UTF-8, not JSON, nested deeper than `serde_json`'s limit
//! of 128, not a request object) is answered `{"type":"error","seq":null,...}`, with the line's
//! own `seq` instead of `null` when it is an object with a valid one, and the next line is served
//! (PROTOCOL.md, "Errors").

use std::io::{BufRead, Write};

use crate::implementations::{ImplError, Implementation};
use crate::protocol::{Request, Response, PROTOCOL_VERSION};

/// Answers requests from `input` on `output` until `stop` or end of input.
pub fn serve(
    imp: &mut dyn Implementation,
    input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    let mut step_seq: Option<u64> = None;
    let mut input = input;
    let mut raw = Vec::new();
    loop {
        raw.clear();
        if input.read_until(b'\n', &mut raw)? == 0 {
            return Ok(());
        }
        let request = match std::str::from_utf8(&raw) {
            Ok(line) if line.trim().is_empty() => continue,
            line => parse_request(line),
        };
        let response = match request {
            Err((bad, seq)) => Response::Error {
                seq,
                message: bad.to_string(),
            },
            Ok(Request::Stop) => return Ok(()),
            Ok(Request::Start { protocol_version }) if protocol_version != PROTOCOL_VERSION => Response::Error {
                seq: None,
                message: format!("protocol version {protocol_version} is not supported (this adapter speaks {PROTOCOL_VERSION})"),
            },
            Ok(Request::Start { .. }) => Response::Started {
                protocol_version: PROTOCOL_VERSION,
                implementation: imp.info().clone(),
            },
            Ok(Request::CaseStart { seq, case, root, config }) => match imp.start_case(seq, &case, &root, &config) {
                Ok(()) => {
                    step_seq = Some(seq);
                    Response::CaseStarted { seq, refused: None }
                }
                Err(e) => error(Some(seq), e),
            },
            Ok(Request::Step { seq, index, step }) => {
                if step_seq != Some(seq) {
                    Response::Error {
                        seq: Some(seq),
                        message: "step for a case that was not started".into(),
                    }
                } else {
                    match imp.step(index, &step) {
                        Ok(outcome) => {
                            let (result, refused) = outcome.to_response_parts();
                            Response::StepResult {
                                seq,
                                index,
                                result,
                                refused,
                            }
                        }
                        Err(e) => error(Some(seq), e),
                    }
                }
            }
            Ok(Request::CaseEnd { seq }) => {
                step_seq = None;
                match imp.end_case() {
                    Ok(()) => Response::CaseEnded { seq },
                    Err(e) => error(Some(seq), e),
                }
            }
        };
        let text = serde_json::to_string(&response).map_err(std::io::Error::other)?;
        writeln!(output, "{text}")?;
        output.flush()?;
    }
}

/// Why a request line is bad; its `Display` is the protocol error that answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadRequest {
    NotUtf8 { valid_up_to: usize },
    NotAnObject,
    NotARequest(String),
}

impl std::fmt::Display for BadRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadRequest::NotUtf8 { valid_up_to } => write!(
                f,
                "bad request: the line is not valid UTF-8 (at byte {valid_up_to})"
            ),
            BadRequest::NotAnObject => {
                f.write_str("bad request: a request is a JSON object, and this line is not one")
            }
            BadRequest::NotARequest(e) => write!(f, "bad request: {e}"),
        }
    }
}

impl std::error::Error for BadRequest {}

/// One request line, or why it is bad and the `seq` to answer it with (PROTOCOL.md, "Errors": a
/// bad request line is answered, with its own `seq` when it is an object with a valid one, and
/// the session goes on).
fn parse_request(
    line: Result<&str, std::str::Utf8Error>,
) -> Result<Request, (BadRequest, Option<u64>)> {
    let line = line.map_err(|e| {
        let valid_up_to = e.valid_up_to();
        (BadRequest::NotUtf8 { valid_up_to }, None)
    })?;
    if !line.trim_start().starts_with('{') {
        return Err((BadRequest::NotAnObject, None));
    }
    serde_json::from_str::<Request>(line).map_err(|e| {
        let seq = serde_json::from_str::<serde_json::Value>(line)
            .ok()
            .and_then(|v| v.get("seq").and_then(serde_json::Value::as_u64));
        (BadRequest::NotARequest(e.to_string()), seq)
    })
}

fn error(seq: Option<u64>, e: ImplError) -> Response {
    Response::Error {
        seq,
        message: match e {
            ImplError::Refused(m) | ImplError::RefusedWithStderr(m, _) => m,
            ImplError::Broken(f) => f.message(),
        },
    }
}
