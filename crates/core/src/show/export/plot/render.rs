//! Where a picture becomes an image: the embedded fonts, one PNG encoder
//! and one SVG writer for every chart the crate draws.

use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use super::ImageFormat;
use crate::show::export::ExportError;

/// The family the chart asks for; in an SVG it is a CSS fallback list.
pub(crate) const FAMILY: &str = "DejaVu Sans, Verdana, Arial, sans-serif";
static REGULAR: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/fonts/DejaVuSans.ttf"
));
static BOLD: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/fonts/DejaVuSans-Bold.ttf"
));

/// Something drawn on any plotters backend: the chart, the comparison.
pub(crate) trait Picture {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ExportError>;
}

/// Draws `picture` as a PNG file's or an SVG document's bytes: the one
/// place either image is made (one PNG encoder, one compression).
pub(crate) fn render_picture(
    format: ImageFormat,
    w: u32,
    h: u32,
    picture: &impl Picture,
) -> Result<Vec<u8>, ExportError> {
    match format {
        ImageFormat::Svg => {
            let mut out = String::new();
            {
                let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
                picture.draw(&root)?;
                root.present().map_err(draw_err)?;
            }
            Ok(out.into_bytes())
        }
        ImageFormat::Png => {
            let mut rgb = vec![0u8; w as usize * h as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
                picture.draw(&root)?;
                root.present().map_err(draw_err)?;
            }
            encode_png(&rgb, w, h)
        }
    }
}

/// An RGB picture as a PNG file's bytes. Fast compression: a chart is
/// flat colour, so the stronger levels save little and cost several times
/// the time.
fn encode_png(rgb: &[u8], w: u32, h: u32) -> Result<Vec<u8>, ExportError> {
    let mut out = Vec::with_capacity(rgb.len() / 8);
    let mut enc = ::png::Encoder::new(&mut out, w, h);
    enc.set_color(::png::ColorType::Rgb);
    enc.set_depth(::png::BitDepth::Eight);
    enc.set_compression(::png::Compression::Fast);
    let png_err = |e: ::png::EncodingError| ExportError::Draw(format!("PNG encoding: {e}"));
    let mut writer = enc.write_header().map_err(png_err)?;
    writer.write_image_data(rgb).map_err(png_err)?;
    writer.finish().map_err(png_err)?;
    Ok(out)
}

pub(crate) fn draw_err(e: impl std::fmt::Display) -> ExportError {
    ExportError::Draw(e.to_string())
}

pub(crate) fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Both are valid TrueType files compiled in; a failure would show as
        // a drawing error on the first text.
        let _ = register_font(FAMILY, FontStyle::Normal, REGULAR);
        let _ = register_font(FAMILY, FontStyle::Bold, BOLD);
    });
}
