//! Charts over an experiment's time, as SVG: one panel per quantity, stacked, sharing
//! the time axis.

use std::path::Path;

use plotters::prelude::*;

/// A line on a panel.
pub struct Series {
    pub name: String,
    /// (seconds from the start, value); a gap (no value) splits the line.
    pub points: Vec<(f64, Option<f64>)>,
}

pub struct Panel {
    pub title: String,
    pub y_label: String,
    pub series: Vec<Series>,
}

const COLORS: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
];

/// Writes the panels to `path`, time on the x axis up to `seconds`.
pub fn write(path: &Path, title: &str, seconds: f64, panels: &[Panel]) -> anyhow::Result<()> {
    let height = 60 + 260 * panels.len() as u32;
    let root = SVGBackend::new(path, (960, height)).into_drawing_area();
    root.fill(&WHITE).map_err(draw_error)?;
    let (header, body) = root.split_vertically(40);
    header
        .titled(title, ("sans-serif", 20))
        .map_err(draw_error)?;
    for (panel, area) in panels.iter().zip(body.split_evenly((panels.len(), 1))) {
        let top = panel
            .series
            .iter()
            .flat_map(|series| series.points.iter().filter_map(|(_, value)| *value))
            .fold(1.0_f64, f64::max)
            * 1.1;
        let mut chart = ChartBuilder::on(&area)
            .caption(&panel.title, ("sans-serif", 15))
            .margin(8)
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..seconds, 0.0..top)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_desc("seconds")
            .y_desc(&panel.y_label)
            .draw()
            .map_err(draw_error)?;
        for (index, series) in panel.series.iter().enumerate() {
            let color = COLORS[index % COLORS.len()];
            for (n, run) in runs(&series.points).into_iter().enumerate() {
                let line = chart
                    .draw_series(LineSeries::new(run, color.stroke_width(2)))
                    .map_err(draw_error)?;
                if n == 0 {
                    line.label(&series.name).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                    });
                }
            }
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(draw_error)?;
    }
    root.present().map_err(draw_error)?;
    Ok(())
}

/// The points split at every gap.
fn runs(points: &[(f64, Option<f64>)]) -> Vec<Vec<(f64, f64)>> {
    let mut runs = vec![Vec::new()];
    for &(at, value) in points {
        match value {
            Some(value) => runs
                .last_mut()
                .map(|run| run.push((at, value)))
                .unwrap_or(()),
            None => runs.push(Vec::new()),
        }
    }
    runs.retain(|run| !run.is_empty());
    runs
}

fn draw_error(error: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("drawing the chart: {error}")
}
