//! Items as pictures: the files that `serve --images COLUMN` names, read
//! and checked at start by the library (`trellis::io::images`: relative
//! paths inside the CSV's directory, regular files of at most
//! [`MAX_IMAGE_BYTES`] each and [`MAX_TOTAL_BYTES`] in all, PNG, JPEG, GIF,
//! WebP or SVG by extension and contents).
//!
//! The first failure stops the server before it serves anything, with a
//! message naming the row (1-based data row) and the point. The server then
//! answers `GET /api/item/{index}/image` from memory with the type found
//! there: no request can name a path, so no other file can be read. SVG
//! images are served with a content security policy that sandboxes them (no
//! script runs even when one is opened directly).

use std::path::Path;

pub use trellis::io::images::{MAX_IMAGE_BYTES, MAX_TOTAL_BYTES};

/// One point's picture, read and checked at start.
#[derive(Debug, Clone)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif`, `image/webp` or `image/svg+xml`.
    pub content_type: &'static str,
    /// The file's bytes (cheap to clone: shared).
    pub bytes: axum::body::Bytes,
}

/// Reads and checks the image of every point (see the module docs).
/// `column` is the column's name, `names` the points' names (for messages).
pub fn load(
    csv: &Path,
    column: &str,
    paths: &[String],
    names: &[String],
) -> anyhow::Result<Vec<Image>> {
    let images =
        trellis::io::images::read_images(csv, &format!("--images {column}"), paths, names)?;
    Ok(images
        .into_iter()
        .map(|i| Image {
            content_type: i.content_type,
            bytes: i.bytes.into(),
        })
        .collect())
}
