//! A minimal SVG plotter for the experiment figures: lines, points with error
//! bars, bars, horizontal reference lines, linear or log x axis, a legend.

use std::fmt::Write;

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Style {
    /// Points joined by a line.
    Line,
    /// Points with vertical error bars.
    Points,
    /// Vertical bars from 0 (of the given width in x units).
    Bars(f64),
}

/// One data series: `(x, y, error)` points.
pub struct Series {
    pub label: String,
    pub color: &'static str,
    pub style: Style,
    pub points: Vec<(f64, f64, f64)>,
}

/// A plot.
pub struct Plot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub series: Vec<Series>,
    /// Horizontal reference lines: `(label, y, color)`.
    pub hlines: Vec<(String, f64, &'static str)>,
}

const W: f64 = 720.0;
const H: f64 = 440.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 200.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;

/// "Nice" tick positions covering `[lo, hi]`.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-12);
    let raw = span / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 7.0)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

impl Plot {
    /// The SVG document.
    pub fn render(&self) -> String {
        let fx = |x: f64| if self.log_x { x.log10() } else { x };
        let mut xs: Vec<f64> = Vec::new();
        let mut ys: Vec<f64> = self.hlines.iter().map(|h| h.1).collect();
        for s in &self.series {
            for &(x, y, e) in &s.points {
                xs.push(fx(x));
                ys.push(y - e);
                ys.push(y + e);
                if let Style::Bars(w) = s.style {
                    xs.push(fx(x - w / 2.0));
                    xs.push(fx(x + w / 2.0));
                    ys.push(0.0);
                }
            }
        }
        let finite = |v: &Vec<f64>| {
            v.iter()
                .copied()
                .filter(|x| x.is_finite())
                .collect::<Vec<_>>()
        };
        let (xs, ys) = (finite(&xs), finite(&ys));
        let (mut x0, mut x1) = (
            xs.iter().cloned().fold(f64::INFINITY, f64::min),
            xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        );
        let (mut y0, mut y1) = (
            ys.iter().cloned().fold(f64::INFINITY, f64::min),
            ys.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        );
        if x1.partial_cmp(&x0) != Some(std::cmp::Ordering::Greater) {
            x0 -= 1.0;
            x1 += 1.0;
        }
        if y1.partial_cmp(&y0) != Some(std::cmp::Ordering::Greater) {
            y0 -= 1.0;
            y1 += 1.0;
        }
        let (px, py) = (0.05 * (x1 - x0), 0.08 * (y1 - y0));
        let (x0, x1, y0, y1) = (x0 - px, x1 + px, y0 - py, y1 + py);
        let sx = |x: f64| LEFT + (fx(x) - x0) / (x1 - x0) * (W - LEFT - RIGHT);
        let sy = |y: f64| TOP + (y1 - y) / (y1 - y0) * (H - TOP - BOTTOM);
        let mut o = String::new();
        let _ = writeln!(
            o,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(o, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
        let _ = writeln!(
            o,
            r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"#,
            (LEFT + W - RIGHT) / 2.0,
            escape(&self.title)
        );
        // Axes and ticks.
        let (ax0, ax1, ay0, ay1) = (LEFT, W - RIGHT, TOP, H - BOTTOM);
        let _ = writeln!(
            o,
            r#"<rect x="{ax0}" y="{ay0}" width="{}" height="{}" fill="none" stroke="black"/>"#,
            ax1 - ax0,
            ay1 - ay0
        );
        let xticks: Vec<(f64, String)> = if self.log_x {
            ((x0.ceil() as i64)..=(x1.floor() as i64))
                .map(|k| (10f64.powi(k as i32), format!("1e{k}")))
                .collect()
        } else {
            ticks(x0, x1)
                .into_iter()
                .map(|t| (t, format!("{t}")))
                .collect()
        };
        for (t, label) in xticks {
            let x = sx(t);
            let _ = writeln!(
                o,
                r#"<line x1="{x}" y1="{ay1}" x2="{x}" y2="{}" stroke="black"/><text x="{x}" y="{}" text-anchor="middle">{label}</text>"#,
                ay1 + 5.0,
                ay1 + 18.0
            );
        }
        for t in ticks(y0, y1) {
            let y = sy(t);
            let _ = writeln!(
                o,
                r##"<line x1="{}" y1="{y}" x2="{ax0}" y2="{y}" stroke="black"/><line x1="{ax0}" y1="{y}" x2="{ax1}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
                ax0 - 5.0,
                ax0 - 8.0,
                y + 4.0,
                format!("{t:.3}")
                    .trim_end_matches('0')
                    .trim_end_matches('.')
            );
        }
        let _ = writeln!(
            o,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            (ax0 + ax1) / 2.0,
            H - 15.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            o,
            r#"<text x="18" y="{}" text-anchor="middle" transform="rotate(-90 18 {})">{}</text>"#,
            (ay0 + ay1) / 2.0,
            (ay0 + ay1) / 2.0,
            escape(&self.y_label)
        );
        // Data.
        let mut legend: Vec<(String, &'static str, bool)> = Vec::new();
        for (label, y, color) in &self.hlines {
            let _ = writeln!(
                o,
                r#"<line x1="{ax0}" y1="{}" x2="{ax1}" y2="{}" stroke="{color}" stroke-dasharray="6 4"/>"#,
                sy(*y),
                sy(*y)
            );
            legend.push((label.clone(), color, true));
        }
        for s in &self.series {
            match s.style {
                Style::Line => {
                    let pts: Vec<String> = s
                        .points
                        .iter()
                        .map(|&(x, y, _)| format!("{},{}", sx(x), sy(y)))
                        .collect();
                    let _ = writeln!(
                        o,
                        r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>"#,
                        pts.join(" "),
                        s.color
                    );
                    for &(x, y, _) in &s.points {
                        let _ = writeln!(
                            o,
                            r#"<circle cx="{}" cy="{}" r="3.5" fill="{}"/>"#,
                            sx(x),
                            sy(y),
                            s.color
                        );
                    }
                }
                Style::Points => {
                    for &(x, y, e) in &s.points {
                        let _ = writeln!(
                            o,
                            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}"/><circle cx="{}" cy="{}" r="2.5" fill="{}"/>"#,
                            sx(x),
                            sy(y - e),
                            sx(x),
                            sy(y + e),
                            s.color,
                            sx(x),
                            sy(y),
                            s.color
                        );
                    }
                }
                Style::Bars(w) => {
                    for &(x, y, _) in &s.points {
                        let (a, b) = (sx(x - w / 2.0), sx(x + w / 2.0));
                        let (top, base) = (sy(y.max(0.0)), sy(y.min(0.0)));
                        let _ = writeln!(
                            o,
                            r#"<rect x="{a}" y="{top}" width="{}" height="{}" fill="{}" fill-opacity="0.45"/>"#,
                            (b - a).max(1.0),
                            base - top,
                            s.color
                        );
                    }
                }
            }
            legend.push((s.label.clone(), s.color, false));
        }
        for (k, (label, color, dashed)) in legend.iter().enumerate() {
            let y = TOP + 10.0 + 20.0 * k as f64;
            let dash = if *dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            let _ = writeln!(
                o,
                r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{color}" stroke-width="2"{dash}/><text x="{}" y="{}">{}</text>"#,
                W - RIGHT + 12.0,
                W - RIGHT + 36.0,
                W - RIGHT + 42.0,
                y + 4.0,
                escape(label)
            );
        }
        o.push_str("</svg>\n");
        o
    }
}
