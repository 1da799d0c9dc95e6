// stride._stride._plot: heatmap grids as PNG or SVG images
// (include/stride/plot.h), under python/stride/plot.py, which takes any
// tensor of maps.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "bindings.h"
#include "stride/error.h"
#include "stride/plot.h"

namespace stride::python {

namespace {

// The (N, rows, cols) float32 CPU contiguous tensor's maps.
std::vector<plot::Heatmap> heatmaps_of(const Tensor& maps) {
  if (maps.dim() != 3 || maps.dtype() != kFloat32 || !maps.is_contiguous() ||
      !maps.device().is_cpu()) {
    throw ValueError(
        "[stride.plot] expected a contiguous float32 CPU tensor of shape (maps, rows, cols).");
  }
  const int64_t rows = maps.size(1), cols = maps.size(2);
  const float* data = maps.data_ptr<float>();
  std::vector<plot::Heatmap> out(size_t(maps.size(0)));
  for (size_t k = 0; k < out.size(); ++k) {
    const float* map = data + int64_t(k) * rows * cols;
    out[k] = {std::vector<float>(map, map + rows * cols), rows, cols};
  }
  return out;
}

void write_heatmaps(const std::string& path,
                    const Tensor& maps,
                    const std::string& title,
                    const std::vector<std::string>& map_titles,
                    const std::vector<std::string>& row_labels,
                    const std::vector<std::string>& col_labels,
                    int64_t grid_cols,
                    bool normalize_each) {
  const std::vector<plot::Heatmap> cells = heatmaps_of(maps);
  const plot::HeatmapLabels labels{title, map_titles, row_labels, col_labels};
  const plot::HeatmapGridOptions options{.grid_cols = grid_cols, .normalize_each = normalize_each};
  nb::gil_scoped_release no_gil;
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".svg") == 0) {
    plot::write_heatmap_grid_svg(path, cells, labels, options);
  } else {
    plot::write_heatmap_grid_png(path, cells, labels, options);
  }
}

}  // namespace

void bind_plot(nb::module_& m) {
  nb::module_ p = m.def_submodule("_plot", "Heatmap grids as images.");
  p.def("write_heatmaps", &write_heatmaps, nb::arg("path"), nb::arg("maps"), nb::arg("title"),
        nb::arg("map_titles"), nb::arg("row_labels"), nb::arg("col_labels"), nb::arg("grid_cols"),
        nb::arg("normalize_each"),
        "Writes (maps, rows, cols) float32 maps as a labelled grid: SVG for a .svg path, else "
        "PNG.");
}

}  // namespace stride::python
