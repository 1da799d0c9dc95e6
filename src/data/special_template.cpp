// SpecialTemplate (src/data/special_template.h).
#include "data/special_template.h"

#include <nlohmann/json.hpp>

#include "stride/error.h"

namespace stride::data::detail {

namespace {

[[noreturn]] void refuse(const std::string& source,
                         const std::string& key,
                         const std::string& why) {
  throw ValueError(source + ": key \"" + key + "\": " + why);
}

}  // namespace

SpecialTemplate::SpecialTemplate() : single_{{0, {}, 0}}, pair_{{0, {}, 0}, {1, {}, 1}} {}

std::vector<SpecialTemplate::Piece> SpecialTemplate::read_pieces(const nlohmann::json& list,
                                                                 const nlohmann::json& special,
                                                                 const std::string& key,
                                                                 const std::string& source,
                                                                 bool pair) {
  std::vector<Piece> pieces;
  for (const nlohmann::json& item : list) {
    if (item.contains("Sequence")) {
      const std::string id = item["Sequence"].at("id").get<std::string>();
      if (id != "A" && (id != "B" || !pair)) {
        refuse(source, key, "names a sequence \"" + id + "\"" + (pair ? "" : " (one sequence: A)"));
      }
      pieces.push_back({id == "A" ? 0 : 1, {}, item["Sequence"].value("type_id", int64_t(0))});
      continue;
    }
    const nlohmann::json& token = item.at("SpecialToken");
    const std::string name = token.at("id").get<std::string>();
    if (!special.contains(name)) refuse(source, key, "no special_tokens entry for " + name);
    pieces.push_back({-1, special[name].at("ids").get<std::vector<int64_t>>(),
                      token.value("type_id", int64_t(0))});
  }
  return pieces;
}

void SpecialTemplate::read(const nlohmann::json& p,
                           const std::string& key,
                           const std::string& source) {
  const std::string type = p.value("type", "");
  if (type == "Sequence") {
    const nlohmann::json& list = p.at("processors");
    for (size_t i = 0; i < list.size(); ++i) {
      read(list[i], key + ".processors." + std::to_string(i), source);
    }
  } else if (type == "TemplateProcessing") {
    const nlohmann::json& special = p.at("special_tokens");
    single_ = read_pieces(p.at("single"), special, key + ".single", source, false);
    pair_ = read_pieces(p.at("pair"), special, key + ".pair", source, true);
  } else if (type == "BertProcessing") {
    // {"cls": ["[CLS]", 101], "sep": ["[SEP]", 102]}: [CLS] A [SEP] and
    // [CLS] A [SEP] B:1 [SEP]:1.
    const int64_t cls = p.at("cls").at(1).get<int64_t>();
    const int64_t sep = p.at("sep").at(1).get<int64_t>();
    single_ = {{-1, {cls}, 0}, {0, {}, 0}, {-1, {sep}, 0}};
    pair_ = {{-1, {cls}, 0}, {0, {}, 0}, {-1, {sep}, 0}, {1, {}, 1}, {-1, {sep}, 1}};
  } else if (type != "ByteLevel") {
    refuse(source, key, "post-processor \"" + type + "\" is not implemented");
  }
}

void SpecialTemplate::check_ids(int64_t vocab_size, const std::string& source) const {
  for (int64_t id : ids()) {
    if (id < 0 || id >= vocab_size) {
      refuse(source, "post_processor",
             "special token id " + std::to_string(id) + " is not in the vocabulary");
    }
  }
}

Tokenizer::WithSpecialTokens SpecialTemplate::apply(const std::vector<int64_t>& first,
                                                    const std::vector<int64_t>* second) const {
  Tokenizer::WithSpecialTokens out;
  for (const Piece& piece : second ? pair_ : single_) {
    const std::vector<int64_t>& ids = piece.sequence < 0    ? piece.ids
                                      : piece.sequence == 0 ? first
                                                            : *second;
    out.ids.insert(out.ids.end(), ids.begin(), ids.end());
    out.type_ids.resize(out.ids.size(), piece.type_id);
  }
  return out;
}

std::vector<int64_t> SpecialTemplate::prefix() const {
  std::vector<int64_t> out;
  for (const Piece& piece : single_) {
    if (piece.sequence >= 0) break;
    out.insert(out.end(), piece.ids.begin(), piece.ids.end());
  }
  return out;
}

std::vector<int64_t> SpecialTemplate::ids() const {
  std::vector<int64_t> out;
  for (const auto* pieces : {&single_, &pair_}) {
    for (const Piece& piece : *pieces) out.insert(out.end(), piece.ids.begin(), piece.ids.end());
  }
  return out;
}

}  // namespace stride::data::detail
