//! Serving an [`Implementation`] over the adapter protocol on a reader/writer pair. This is what
//! `skillspec adapter` runs (with the reference), and it doubles as a worked example of the
//! protocol for adapter authors.

use std::io::{BufRead, Write};

use crate::implementations::protocol::{Request, Response, PROTOCOL_VERSION};
use crate::implementations::{ImplError, Implementation};

/// Answers requests from `input` on `output` until `stop` or end of input.
pub fn serve(
    imp: &mut dyn Implementation,
    input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    let mut step_seq: Option<u64> = None;
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let response = match serde_json::from_str::<Request>(&line) {
            Err(e) => Response::Error {
                seq: None,
                message: format!("bad request: {e}"),
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
                    Response::CaseStarted { seq }
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
                        Ok(outcome) => Response::StepResult {
                            seq,
                            index,
                            result: outcome.to_wire(),
                        },
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
    Ok(())
}

fn error(seq: Option<u64>, e: ImplError) -> Response {
    Response::Error {
        seq,
        message: match e {
            ImplError::Refused(m) => m,
            ImplError::Broken(f) => f.message,
        },
    }
}
