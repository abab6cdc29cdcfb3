//! Charts drawn on the server as inline SVG: no chart library, no script, and nothing a
//! Content-Security-Policy must allow (presentation attributes, not `style`). Elements are
//! closed explicitly: inside `<svg>` an HTML parser does not know which ones are empty.

use chrono::{DateTime, Utc};
use maud::{Markup, html};

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 160.0;
const PAD: f64 = 28.0;

/// A line over time (`points` in time order), with its range labelled.
pub fn line(points: &[(DateTime<Utc>, f64)], label: &str) -> Markup {
    if points.len() < 2 {
        return html! { p.muted { (label) ": not enough runs recorded yet to draw." } };
    }
    let (t0, t1) = (points[0].0, points[points.len() - 1].0);
    let span = (t1 - t0).num_milliseconds().max(1) as f64;
    let max = points.iter().map(|p| p.1).fold(0.0_f64, f64::max).max(1.0);
    let min = points
        .iter()
        .map(|p| p.1)
        .fold(f64::INFINITY, f64::min)
        .min(max);
    let x =
        |t: DateTime<Utc>| PAD + (t - t0).num_milliseconds() as f64 / span * (WIDTH - 2.0 * PAD);
    let y = |v: f64| HEIGHT - PAD - v / max * (HEIGHT - 2.0 * PAD);
    let path: String = points
        .iter()
        .map(|(t, v)| format!("{:.1},{:.1}", x(*t), y(*v)))
        .collect::<Vec<_>>()
        .join(" ");
    html! {
        figure.chart {
            svg xmlns="http://www.w3.org/2000/svg" viewBox={"0 0 " (WIDTH) " " (HEIGHT)} role="img" aria-label=(label) {
                line x1=(PAD) y1=(HEIGHT - PAD) x2=(WIDTH - PAD) y2=(HEIGHT - PAD) stroke="#99a" stroke-width="1" {}
                line x1=(PAD) y1=(PAD) x2=(PAD) y2=(HEIGHT - PAD) stroke="#99a" stroke-width="1" {}
                polyline points=(path) fill="none" stroke="#2b6cb0" stroke-width="2" {}
                text x=(PAD + 4.0) y=(PAD - 8.0) font-size="11" fill="#556" { (format!("max {max:.0}")) }
                text x=(PAD + 4.0) y=(HEIGHT - PAD - 4.0) font-size="11" fill="#556" { (format!("min {min:.0}")) }
                text x=(PAD) y=(HEIGHT - 8.0) font-size="11" fill="#556" { (t0.format("%m-%d %H:%M")) }
                text x=(WIDTH - PAD) y=(HEIGHT - 8.0) font-size="11" fill="#556" text-anchor="end" { (t1.format("%m-%d %H:%M")) }
            }
            figcaption { (label) }
        }
    }
}

/// Small bars, oldest first (e.g. the durations of a job's last runs); failed runs in red.
pub fn bars(values: &[(f64, bool)], label: &str) -> Markup {
    const W: f64 = 160.0;
    const H: f64 = 28.0;
    if values.is_empty() {
        return html! { span.muted { "—" } };
    }
    let max = values.iter().map(|v| v.0).fold(0.0_f64, f64::max);
    let step = W / values.len() as f64;
    html! {
        svg.spark xmlns="http://www.w3.org/2000/svg" viewBox={"0 0 " (W) " " (H)} width=(W) height=(H) role="img" aria-label=(label) {
            title { (label) }
            @for (i, (value, failed)) in values.iter().enumerate() {
                @let h = if max > 0.0 { (value / max * (H - 2.0)).max(1.0) } else { 1.0 };
                rect x=(format!("{:.1}", i as f64 * step + 1.0)) y=(format!("{:.1}", H - h)) width=(format!("{:.1}", (step - 2.0).max(1.0))) height=(format!("{h:.1}"))
                    fill=(if *failed { "#c53030" } else { "#4a8" }) {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_close_every_svg_element_and_need_two_points() {
        let t = Utc::now();
        let drawn = line(
            &[(t, 3.0), (t + chrono::Duration::minutes(5), 7.0)],
            "active",
        )
        .into_string();
        assert!(
            drawn.contains("<polyline") && drawn.contains("</polyline>"),
            "{drawn}"
        );
        assert!(drawn.contains("max 7"), "{drawn}");
        assert!(
            line(&[(t, 1.0)], "active")
                .into_string()
                .contains("not enough")
        );
        let spark = bars(&[(1.0, false), (2.0, true)], "durations").into_string();
        assert_eq!(spark.matches("</rect>").count(), 2);
        assert!(spark.contains("#c53030"));
    }
}
