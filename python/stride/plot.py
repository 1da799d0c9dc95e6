"""stride.plot: heatmap grids written as images without a plotting library,
the same drawing as `stride attention` (include/stride/plot.h).

    stride.plot.save_heatmaps("heads.png", out.attentions[0][0],
                              map_titles=[f"head {h}" for h in range(H)],
                              row_labels=tokens, col_labels=tokens)

A .svg path gives an SVG document, any other a PNG (text in a 5 x 7 pixel
font: printable ASCII as itself, other characters as boxes). Values are
probabilities, clamped to [0, 1], unless normalize_each scales each map to
its own range; the viridis colours run from 0 (dark) to 1 (yellow).
"""

import os

from . import _stride


def save_heatmaps(
    path,
    maps,
    *,
    title="",
    map_titles=(),
    row_labels=(),
    col_labels=(),
    grid_cols=0,
    normalize_each=False,
):
    """Writes maps, a (rows, cols) tensor or a (..., rows, cols) stack of
    them, as one image: the maps in a grid of grid_cols per row (0: a
    square grid), each with its title and its rows' and columns' labels
    (strings, one each), a colour bar, and the figure's title."""
    import stride

    if not isinstance(maps, stride.Tensor):
        maps = stride.tensor(maps)
    if maps.dim() < 2:
        raise ValueError(
            f"save_heatmaps() expects maps of shape (rows, cols) or (..., rows, cols); "
            f"got {tuple(maps.shape)}."
        )
    stack = maps.detach().to("cpu", stride.float32).reshape(-1, *maps.shape[-2:]).contiguous()
    _stride._plot.write_heatmaps(
        os.fspath(path),
        stack,
        title,
        [str(t) for t in map_titles],
        [str(t) for t in row_labels],
        [str(t) for t in col_labels],
        int(grid_cols),
        bool(normalize_each),
    )
