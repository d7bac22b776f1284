//! A minimal SVG plotter for the experiment figures: lines, points with error
//! bars, bars, horizontal reference lines, linear or log x axis, a legend.

use std::fmt::Write;
use std::path::Path;

use anyhow::{Context, Result};

/// Creates the directory of `--svg` (and its parents); the error names it
/// (e.g. a file already there).
pub fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the --svg directory {}", dir.display()))
}

/// Writes a figure; the error names the file.
pub fn write_figure(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text)
        .with_context(|| format!("cannot write the figure {}", path.display()))
}

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

/// A tick value with at most 3 decimals and no trailing zeros.
fn tick_label(t: f64) -> String {
    let s = format!("{t:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
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
                .map(|t| (t, tick_label(t)))
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
                tick_label(t)
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

/// A labelled square heatmap of an `n × n` matrix, each cell printed with its
/// value, and a colour bar.
pub struct Heatmap {
    pub title: String,
    pub labels: Vec<String>,
    pub values: Vec<Vec<f64>>,
    /// Blue-white-red around 0 (for signed values); otherwise white to dark
    /// blue from the minimum to the maximum.
    pub diverging: bool,
    /// Digits after the decimal point in the cells.
    pub digits: usize,
}

/// `t ∈ [0, 1]` from `a` to `b`, as an SVG colour.
fn blend(a: [f64; 3], b: [f64; 3], t: f64) -> String {
    let t = t.clamp(0.0, 1.0);
    let c: Vec<u8> = (0..3)
        .map(|k| (a[k] + (b[k] - a[k]) * t).round() as u8)
        .collect();
    format!("rgb({},{},{})", c[0], c[1], c[2])
}

impl Heatmap {
    fn color(&self, v: f64, lo: f64, hi: f64) -> (String, bool) {
        const WHITE: [f64; 3] = [255.0, 255.0, 255.0];
        const BLUE: [f64; 3] = [33.0, 102.0, 172.0];
        const RED: [f64; 3] = [178.0, 24.0, 43.0];
        if !v.is_finite() {
            return ("rgb(200,200,200)".into(), false);
        }
        if self.diverging {
            let m = lo.abs().max(hi.abs()).max(1e-300);
            let t = v / m;
            let c = if t >= 0.0 {
                blend(WHITE, RED, t)
            } else {
                blend(WHITE, BLUE, -t)
            };
            (c, t.abs() > 0.6)
        } else {
            let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.0 };
            (blend(WHITE, BLUE, t), t > 0.6)
        }
    }

    /// The SVG document.
    pub fn render(&self) -> String {
        let n = self.labels.len();
        let cell = (560.0 / n.max(1) as f64).clamp(14.0, 48.0);
        let (left, top) = (70.0, 50.0);
        let side = cell * n as f64;
        let (w, h) = (left + side + 110.0, top + side + 30.0);
        let finite: Vec<f64> = self
            .values
            .iter()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let font = (cell * 0.28).clamp(7.0, 11.0);
        let mut o = String::new();
        let _ = writeln!(
            o,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(o, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
        let _ = writeln!(
            o,
            r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"#,
            w / 2.0,
            escape(&self.title)
        );
        for (i, label) in self.labels.iter().enumerate() {
            let c = top + (i as f64 + 0.5) * cell;
            let _ = writeln!(
                o,
                r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
                left - 6.0,
                c + 4.0,
                escape(label)
            );
            let x = left + (i as f64 + 0.5) * cell;
            let _ = writeln!(
                o,
                r#"<text x="{x}" y="{}" text-anchor="middle">{}</text>"#,
                top + side + 16.0,
                escape(label)
            );
        }
        for (i, row) in self.values.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                let (fill, dark) = self.color(v, lo, hi);
                let (x, y) = (left + j as f64 * cell, top + i as f64 * cell);
                let ink = if dark { "white" } else { "black" };
                let _ = writeln!(
                    o,
                    r#"<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}" stroke="white"/><text x="{}" y="{}" font-size="{font}" text-anchor="middle" fill="{ink}">{:.*}</text>"#,
                    x + cell / 2.0,
                    y + cell / 2.0 + font / 3.0,
                    self.digits,
                    v
                );
            }
        }
        // Colour bar.
        let (bx, steps) = (left + side + 30.0, 40);
        let (b_lo, b_hi) = if self.diverging {
            let m = lo.abs().max(hi.abs());
            (-m, m)
        } else {
            (lo, hi)
        };
        for k in 0..steps {
            let v = b_hi - (b_hi - b_lo) * (k as f64 + 0.5) / steps as f64;
            let (fill, _) = self.color(v, lo, hi);
            let _ = writeln!(
                o,
                r#"<rect x="{bx}" y="{}" width="18" height="{}" fill="{fill}"/>"#,
                top + side * k as f64 / steps as f64,
                side / steps as f64 + 0.5
            );
        }
        for (v, y) in [(b_hi, top + 4.0), (b_lo, top + side)] {
            let _ = writeln!(
                o,
                r#"<text x="{}" y="{y}">{:.*}</text>"#,
                bx + 24.0,
                self.digits,
                v
            );
        }
        o.push_str("</svg>\n");
        o
    }
}
