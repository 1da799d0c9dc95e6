// einsum: PyTorch's grammar, contracted pairwise with bmm.
//
// Each letter of the equation is a label (A-Z before a-z, PyTorch's order);
// the dims an operand's "..." covers get labels of their own, aligned from
// the right across operands so that they broadcast. An operand first takes
// the diagonal of each label it repeats and sums the labels no other operand
// and not the output has; then the operands fold left to right: two operands
// become one bmm over (batch: labels both have and a later operand or the
// output needs) x (free labels of the left) x (contracted labels) @ (free
// labels of the right). The result's labels end in the output's order.
#include <algorithm>
#include <string>

#include "core/check.h"
#include "ops/apply.h"
#include "stride/ops.h"

namespace stride {

using detail::Op;

namespace {

constexpr int kLetters = 52;  // labels 0-51 are letters, from 52 the "..." dims
constexpr int kEllipsis = -1;

int letter_label(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -2;
}

// The labels of one term, kEllipsis where "..." stands.
std::vector<int> parse_term(std::string_view term) {
  std::vector<int> labels;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == ' ') continue;
    if (c == '.') {
      STRIDE_CHECK(term.substr(i, 3) == "..." &&
                       std::find(labels.begin(), labels.end(), kEllipsis) == labels.end(),
                   ValueError, "[einsum] \"", term,
                   "\" has a '.' outside one \"...\"; a term takes at most one ellipsis.");
      labels.push_back(kEllipsis);
      i += 2;
      continue;
    }
    const int label = letter_label(c);
    STRIDE_CHECK(label >= 0, ValueError, "[einsum] subscripts are letters and \"...\"; got '", c,
                 "'.");
    labels.push_back(label);
  }
  return labels;
}

int64_t letter_count(const std::vector<int>& labels) {
  return std::count_if(labels.begin(), labels.end(), [](int l) { return l != kEllipsis; });
}

// A term's labels with "..." replaced by the labels of the `covered` dims
// it stands for, the last of `ellipsis_dims` broadcast labels.
std::vector<int> expanded(const std::vector<int>& term, int64_t covered, int64_t ellipsis_dims) {
  std::vector<int> out;
  for (const int l : term) {
    if (l != kEllipsis) {
      out.push_back(l);
      continue;
    }
    for (int64_t j = ellipsis_dims - covered; j < ellipsis_dims; ++j) {
      out.push_back(kLetters + int(j));
    }
  }
  return out;
}

bool contains(const std::vector<int>& labels, int l) {
  return std::find(labels.begin(), labels.end(), l) != labels.end();
}

struct Labeled {
  Tensor t;
  std::vector<int> labels;  // one per dim of t
};

// x with the diagonal of every label it repeats (the diagonal's dim moves
// last, as Tensor::diagonal puts it).
Labeled diagonals(Labeled x) {
  for (size_t i = 0; i < x.labels.size(); ++i) {
    for (size_t j = i + 1; j < x.labels.size(); ++j) {
      if (x.labels[i] != x.labels[j]) continue;
      STRIDE_CHECK(x.t.size(int64_t(i)) == x.t.size(int64_t(j)), ShapeError,
                   "[einsum] a repeated subscript takes a diagonal of dims of one size; got ",
                   x.t.size(int64_t(i)), " and ", x.t.size(int64_t(j)), ".");
      const int label = x.labels[i];
      x.t = x.t.diagonal(0, int64_t(i), int64_t(j));
      x.labels.erase(x.labels.begin() + std::ptrdiff_t(j));
      x.labels.erase(x.labels.begin() + std::ptrdiff_t(i));
      x.labels.push_back(label);
      return diagonals(std::move(x));
    }
  }
  return x;
}

// x summed over the labels that `keep` lacks.
Labeled summed_out(Labeled x, const std::vector<int>& keep) {
  std::vector<int64_t> dims;
  std::vector<int> kept;
  for (size_t i = 0; i < x.labels.size(); ++i) {
    if (contains(keep, x.labels[i])) {
      kept.push_back(x.labels[i]);
    } else {
      dims.push_back(int64_t(i));
    }
  }
  if (dims.empty()) return x;
  return {sum(x.t, dims), kept};
}

int64_t size_of(const Labeled& x, int label) {
  const auto at = std::find(x.labels.begin(), x.labels.end(), label);
  return at == x.labels.end() ? 1 : x.t.size(int64_t(at - x.labels.begin()));
}

// x's dims reordered as `order` (labels x has) and expanded to `sizes`,
// then merged into three dims of the group sizes.
Tensor grouped(const Labeled& x,
               const std::vector<int>& order,
               const std::vector<int64_t>& sizes,
               const std::vector<size_t>& group_ends) {
  std::vector<int64_t> perm;
  for (const int l : order) {
    perm.push_back(int64_t(std::find(x.labels.begin(), x.labels.end(), l) - x.labels.begin()));
  }
  const Tensor t = x.t.permute(perm).expand(sizes);
  std::vector<int64_t> merged;
  size_t begin = 0;
  for (const size_t end : group_ends) {
    int64_t n = 1;
    for (size_t i = begin; i < end; ++i) n *= sizes[i];
    merged.push_back(n);
    begin = end;
  }
  return t.reshape(merged);
}

// a and b multiplied and summed over the labels both have and `needed`
// lacks, with bmm.
Labeled contract(const Labeled& a, const Labeled& b, const std::vector<int>& needed) {
  std::vector<int> batch, free_a, contracted, free_b;
  for (const int l : a.labels) {
    if (!contains(b.labels, l)) {
      free_a.push_back(l);
    } else {
      (contains(needed, l) ? batch : contracted).push_back(l);
    }
  }
  for (const int l : b.labels) {
    if (!contains(a.labels, l)) free_b.push_back(l);
  }
  const auto sizes = [&](const std::vector<int>& labels) {
    std::vector<int64_t> s;
    for (const int l : labels) {
      const int64_t sa = size_of(a, l), sb = size_of(b, l);
      STRIDE_CHECK(sa == sb || sa == 1 || sb == 1, ShapeError, "[einsum] a subscript has sizes ",
                   sa, " and ", sb, " in two operands; they must match or be 1.");
      s.push_back(std::max(sa, sb));
    }
    return s;
  };
  const auto concat = [](std::vector<int> x, const std::vector<int>& y) {
    x.insert(x.end(), y.begin(), y.end());
    return x;
  };
  const std::vector<int> order_a = concat(concat(batch, free_a), contracted);
  const std::vector<int> order_b = concat(concat(batch, contracted), free_b);
  const Tensor lhs = grouped(a, order_a, sizes(order_a),
                             {batch.size(), batch.size() + free_a.size(), order_a.size()});
  const Tensor rhs = grouped(b, order_b, sizes(order_b),
                             {batch.size(), batch.size() + contracted.size(), order_b.size()});
  const std::vector<int> labels = concat(concat(batch, free_a), free_b);
  if (free_a.empty() && free_b.empty()) {
    // A batched dot product ("ij,ij->i"): bmm would run a 1 x K by K x 1
    // GEMM per batch entry; the products summed over K are one pass.
    return {(lhs.squeeze(1) * rhs.squeeze(2)).sum({1}).view(sizes(labels)), labels};
  }
  return {bmm(lhs, rhs).view(sizes(labels)), labels};
}

// The output's labels: after "->", or the "..." dims and then the letters
// seen once, in label order.
std::vector<int> output_labels(std::string_view equation,
                               const std::vector<std::vector<int>>& terms,
                               int64_t ellipsis_dims) {
  const size_t arrow = equation.find("->");
  if (arrow != std::string_view::npos) {
    const std::vector<int> out =
        expanded(parse_term(equation.substr(arrow + 2)), ellipsis_dims, ellipsis_dims);
    for (size_t i = 0; i < out.size(); ++i) {
      STRIDE_CHECK(std::count(out.begin(), out.end(), out[i]) == 1, ValueError,
                   "[einsum] the output names a subscript twice in \"", equation, "\".");
    }
    return out;
  }
  std::vector<int> counts(kLetters, 0);
  for (const std::vector<int>& term : terms) {
    for (const int l : term) {
      if (l != kEllipsis) ++counts[size_t(l)];
    }
  }
  std::vector<int> out = expanded({kEllipsis}, ellipsis_dims, ellipsis_dims);
  for (int l = 0; l < kLetters; ++l) {
    if (counts[size_t(l)] == 1) out.push_back(l);
  }
  return out;
}

// The operands with their labels, "..." expanded, after their diagonals.
std::vector<Labeled> labeled_operands(std::string_view equation,
                                      const std::vector<Tensor>& operands,
                                      std::vector<std::vector<int>>& terms,
                                      int64_t& ellipsis_dims) {
  const std::string_view inputs = equation.substr(0, equation.find("->"));
  size_t begin = 0;
  for (size_t comma = inputs.find(','); begin <= inputs.size(); comma = inputs.find(',', begin)) {
    terms.push_back(parse_term(inputs.substr(begin, comma - begin)));
    begin = comma == std::string_view::npos ? inputs.size() + 1 : comma + 1;
  }
  STRIDE_CHECK(terms.size() == operands.size(), ValueError, "[einsum] \"", equation, "\" has ",
               terms.size(), " terms for ", operands.size(), " operands; pass one per term.");
  std::vector<int64_t> covered;
  for (size_t i = 0; i < terms.size(); ++i) {
    const int64_t letters = letter_count(terms[i]);
    const bool has_ellipsis = contains(terms[i], kEllipsis);
    STRIDE_CHECK(has_ellipsis ? operands[i].dim() >= letters : operands[i].dim() == letters,
                 ValueError, "[einsum] term ", i, " has ", letters, " subscripts for operand ", i,
                 " of shape ", shape_str(operands[i].sizes()), ".");
    STRIDE_CHECK(operands[i].dtype() == operands[0].dtype(), DTypeError,
                 "[einsum] takes operands of one dtype; operand ", i, " is ",
                 to_string(operands[i].dtype()), ", operand 0 ", to_string(operands[0].dtype()),
                 ".");
    covered.push_back(operands[i].dim() - letters);
    ellipsis_dims = std::max(ellipsis_dims, covered.back());
  }
  std::vector<Labeled> labeled;
  for (size_t i = 0; i < terms.size(); ++i) {
    labeled.push_back(diagonals({operands[i], expanded(terms[i], covered[i], ellipsis_dims)}));
  }
  return labeled;
}

}  // namespace

Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands) {
  STRIDE_CHECK(!operands.empty(), ValueError, "[einsum] needs at least one operand.");
  detail::check_dtype_rule(Op::einsum, operands[0]);
  std::vector<std::vector<int>> terms;
  int64_t ellipsis_dims = 0;
  std::vector<Labeled> labeled = labeled_operands(equation, operands, terms, ellipsis_dims);
  const std::vector<int> out = output_labels(equation, terms, ellipsis_dims);
  // needed_after[i]: the labels of the output and of the operands after i.
  std::vector<std::vector<int>> needed_after(labeled.size(), out);
  for (size_t i = labeled.size() - 1; i > 0; --i) {
    needed_after[i - 1] = needed_after[i];
    needed_after[i - 1].insert(needed_after[i - 1].end(), labeled[i].labels.begin(),
                               labeled[i].labels.end());
  }
  for (const int l : out) {
    STRIDE_CHECK(std::any_of(labeled.begin(), labeled.end(),
                             [l](const Labeled& x) { return contains(x.labels, l); }),
                 ValueError, "[einsum] the output of \"", equation,
                 "\" names a subscript no operand has.");
  }
  Labeled acc = summed_out(labeled[0], needed_after[0]);
  for (size_t i = 1; i < labeled.size(); ++i) {
    std::vector<int> keep_b = needed_after[i];
    keep_b.insert(keep_b.end(), acc.labels.begin(), acc.labels.end());
    acc = contract(acc, summed_out(labeled[i], keep_b), needed_after[i]);
  }
  acc = summed_out(acc, out);
  std::vector<int64_t> perm;
  for (const int l : out) {
    perm.push_back(
        int64_t(std::find(acc.labels.begin(), acc.labels.end(), l) - acc.labels.begin()));
  }
  return acc.t.permute(perm);
}

}  // namespace stride
