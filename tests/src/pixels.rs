//! Whether a text's lines show any ink on screen, read from a screenshot: the measure for what
//! hides text where the layout APIs cannot tell (a box a `::before` or `::after` draws over it is
//! named by hit tests as the element drawing it). Independent of any style rule: a text is
//! inked when some pixel in the boxes of its lines differs clearly from the colour most of them
//! have (the ground), and blank when none does.

use anyhow::Context as _;
use serde_json::json;

use crate::ui;

/// A pixel differs from the ground when its channels differ by more than this in sum.
const INK: u32 = 96;

/// Finds each of `texts` on `page` (in the first text node holding it) and says whether the
/// boxes of its lines (the lines that text itself is drawn on, not the rest of the node's) show
/// ink in a screenshot saved at `shot`: `None` when no part of them lies in
/// the capture (a box of no size, or off the page). Fails naming a text that is not on the page.
pub async fn inked(
    page: &ui::Page<'_>,
    texts: &[&str],
    shot: &std::path::Path,
) -> anyhow::Result<Vec<Option<bool>>> {
    let boxes = page
        .eval(&format!(
            r#"(() => {{
              const wanted = {};
              const found = wanted.map(() => null);
              const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
              for (let n = walk.nextNode(); n; n = walk.nextNode()) {{
                wanted.forEach((w, i) => {{
                  const at = n.data.indexOf(w);
                  if (found[i] || at < 0) return;
                  const range = document.createRange();
                  range.setStart(n, at);
                  range.setEnd(n, at + w.length);
                  found[i] = [...range.getClientRects()].map(r =>
                    [r.left + scrollX, r.top + scrollY, r.width, r.height]);
                }});
              }}
              return {{found, width: document.documentElement.clientWidth}};
            }})()"#,
            json!(texts)
        ))
        .await?;
    page.screenshot(shot).await?;
    let file = std::fs::File::open(shot)?;
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info()?;
    let mut buf = vec![0; reader.output_buffer_size().context("capture too large")?];
    let info = reader.next_frame(&mut buf)?;
    let channels = info.color_type.samples();
    anyhow::ensure!(channels >= 3, "capture {} is not in colour", shot.display());
    let width = boxes["width"].as_f64().context("page width")?;
    let scale = f64::from(info.width) / width;
    let pixel = |x: u32, y: u32| {
        let at = (y as usize * info.width as usize + x as usize) * channels;
        [buf[at], buf[at + 1], buf[at + 2]]
    };
    let mut answers = Vec::new();
    for (text, lines) in texts.iter().zip(boxes["found"].as_array().context("found")?) {
        let lines = lines.as_array().with_context(|| format!("{text:?} is not on the page"))?;
        let mut seen = Vec::new();
        for line in lines {
            let n = |i: usize| line[i].as_f64().unwrap_or(0.0) * scale;
            let clamp = |v: f64, max: u32| v.clamp(0.0, f64::from(max)) as u32;
            let (x0, y0) = (clamp(n(0).ceil(), info.width), clamp(n(1).ceil(), info.height));
            let (x1, y1) =
                (clamp((n(0) + n(2)).floor(), info.width), clamp((n(1) + n(3)).floor(), info.height));
            for y in y0..y1 {
                for x in x0..x1 {
                    seen.push(pixel(x, y));
                }
            }
        }
        if seen.is_empty() {
            answers.push(None);
            continue;
        }
        let mut counts: std::collections::HashMap<[u8; 3], usize> = std::collections::HashMap::new();
        for p in &seen {
            *counts.entry(*p).or_default() += 1;
        }
        let ground = counts.into_iter().max_by_key(|(_, c)| *c).map(|(p, _)| p).unwrap_or_default();
        let differs =
            |p: &[u8; 3]| p.iter().zip(ground).map(|(a, b)| u32::from(a.abs_diff(b))).sum::<u32>() > INK;
        answers.push(Some(seen.iter().any(differs)));
    }
    Ok(answers)
}
