//! `sqlrun reserve` and `sqlrun release`.

use crate::error::Result;
use crate::output::holds;
use crate::output::Output;
use crate::reservations::planned::Reservation;
use crate::reservations::take::Released;

/// The run id alone on stdout (a script keeps it for `apply --run`); skips and reclaims on
/// stderr.
pub fn reserved(r: &Reservation, out: &Output) -> Result<()> {
    for line in holds::reclaim_lines(&r.reclaimed) {
        out.note(&line);
    }
    for line in holds::skip_lines(&r.skips) {
        out.note(&line);
    }
    out.json(&serde_json::json!({
        "run_id": r.run_id, "interval": r.interval.to_string(), "held": r.held,
        "skipped": r.skips, "reclaimed": r.reclaimed,
    }))?;
    out.text(&r.run_id.to_string())
}

pub fn released(run_id: i64, released: &Released, out: &Output) -> Result<()> {
    let n = released.freed.len();
    out.json(&serde_json::json!({
        "run_id": run_id, "released_dates": n, "status": "released",
        "in_flight": released.in_flight,
    }))?;
    out.text(&format!(
        "run {run_id} released: {n} date{} freed",
        if n == 1 { "" } else { "s" }
    ))?;
    if !released.in_flight.is_empty() {
        out.note(&format!(
            "{}: run {run_id} is computing {} this instant; it is not waited for: the date \
             commits or rolls back whole, gives up its reservation itself, and then the run \
             stops (it was released)",
            released.in_flight.join(", "),
            if released.in_flight.len() == 1 {
                "it"
            } else {
                "them"
            }
        ));
    }
    Ok(())
}
