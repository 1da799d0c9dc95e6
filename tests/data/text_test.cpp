// Character tokenizer, the article's split, random and sequential windows,
// corpus errors; on the real TinyShakespeare when $STRIDE_DATA is set.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "stride/data.h"
#include "stride/ops.h"
#include "support/temp_dir.h"

namespace stride::data {
namespace {

namespace fs = std::filesystem;

using stride::testing::TempDir;

// The real corpus, or nullopt when $STRIDE_DATA is unset.
std::optional<std::string> real_corpus_path() {
  const char* env = std::getenv("STRIDE_DATA");
  if (!env || !*env) return std::nullopt;
  return std::string(env);
}

#define SKIP_WITHOUT_CORPUS(path)                                                 \
  const auto path = real_corpus_path();                                           \
  if (!path)                                                                      \
    GTEST_SKIP() << "STRIDE_DATA is unset: set it to tinyshakespeare.txt to run " \
                    "the real-corpus tests";

// ---- CharTokenizer ----

TEST(CharTokenizer, VocabularyIsTheSortedDistinctCodePoints) {
  const CharTokenizer tok("hello world\n");
  EXPECT_EQ(tok.vocab(), std::u32string(U"\n dehlorw"));
  EXPECT_EQ(tok.vocab_size(), 9);
  EXPECT_EQ(tok.id('\n'), 0);
  EXPECT_EQ(tok.id('w'), 8);
  EXPECT_EQ(tok.symbol(1), " ");
  EXPECT_TRUE(tok.contains('h'));
  EXPECT_FALSE(tok.contains('z'));
  EXPECT_THROW(CharTokenizer(""), ValueError);
}

TEST(CharTokenizer, EncodeDecodeRoundTrip) {
  const std::string text = "To be, or not to be:\nthat is the question.";
  const CharTokenizer tok(text);
  const Tensor ids = tok.encode_tensor(text);
  EXPECT_EQ(ids.dtype(), kInt64);
  EXPECT_EQ(ids.sizes(), IntArrayRef({int64_t(text.size())}));
  EXPECT_EQ(ids.to_vector<int64_t>(), tok.encode(text));
  EXPECT_EQ(tok.decode(ids), text);
  EXPECT_EQ(tok.decode(tok.encode(text)), text);
  // Any integer dtype and shape decodes in row-major order.
  EXPECT_EQ(tok.decode(ids.narrow(0, 0, 6).view({2, 3}).to(kInt32)), text.substr(0, 6));
}

TEST(CharTokenizer, UnknownCharacterNamesItAndItsPosition) {
  const CharTokenizer tok("abc");
  try {
    tok.encode_tensor("abca\x01z");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("character '\\x01' (U+0001) at byte 4"), std::string::npos) << msg;
  }
  try {
    tok.encode("ab\ncz");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("character '\\n' (U+000A) at byte 2"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(tok.id('z'), ValueError);
  EXPECT_THROW(tok.symbol(3), IndexError);
  try {
    tok.decode(std::vector<int64_t>{0, 1, 7});
    FAIL() << "expected IndexError";
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("id 7 at position 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tok.decode(zeros({2})), DTypeError);
}

TEST(CharTokenizer, EscapesNonPrintableCharacters) {
  EXPECT_EQ(escape_char('a'), "'a'");
  EXPECT_EQ(escape_char('\n'), "'\\n'");
  EXPECT_EQ(escape_char('\''), "'\\''");
  EXPECT_EQ(escape_char('\0'), "'\\x00'");
  EXPECT_EQ(escape_char(0x85), "'\\u0085'");  // a C1 control
  EXPECT_EQ(escape_char(U'é'), "'\xc3\xa9'");
}

// Text is UTF-8: a character is a code point, whatever its bytes, and
// decode gives the UTF-8 back; ids follow code point order, as Python's
// sorted(set(text)).
TEST(CharTokenizer, WorksOnCodePoints) {
  const std::string text =
      "caf\xc3\xa9 \xe2\x80\x94 na\xc3\xafve \xf0\x9f\x98\x80";  // café — naïve 😀
  const CharTokenizer tok(text);
  EXPECT_EQ(tok.vocab(), std::u32string(U" acefnv\u00e9\u00ef\u2014\U0001F600"));
  const std::vector<int64_t> ids = tok.encode(text);
  EXPECT_EQ(ids.size(), 14u);
  EXPECT_EQ(tok.decode(ids), text);
  EXPECT_EQ(tok.symbol(tok.id(U'\u2014')), "\xe2\x80\x94");
  EXPECT_EQ(tok.encode_tensor(text).numel(), 14);
  EXPECT_EQ(tok.first_unknown("caf\xc3\xa9!"), (std::pair<char32_t, size_t>{U'!', 5}));
  EXPECT_FALSE(tok.first_unknown("naïve").has_value());
}

// Bytes that are not UTF-8 are an error naming the first bad byte's offset,
// never characters of their own (decoding them would write invalid UTF-8).
TEST(CharTokenizer, RejectsInvalidUtf8WithItsOffset) {
  const struct {
    std::string text;
    const char* expected;
  } cases[] = {
      {"ab\xff"
       "cd",
       "byte 0xff at offset 2"},                        // never in UTF-8
      {"abc\x80", "byte 0x80 at offset 3"},             // a stray continuation byte
      {"a\xc3", "byte 0xc3 at offset 1"},               // truncated
      {"a\xc0\xaf", "byte 0xc0 at offset 1"},           // overlong '/'
      {"\xed\xa0\x80", "byte 0xed at offset 0"},        // a surrogate
      {"ok\xf4\x90\x80\x80", "byte 0xf4 at offset 2"},  // past U+10FFFF
  };
  const CharTokenizer tok("abcdok");
  for (const auto& c : cases) {
    try {
      CharTokenizer built(c.text);
      ADD_FAILURE() << "accepted " << c.expected;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
    }
    EXPECT_THROW(tok.encode_tensor(c.text), ValueError) << c.expected;
  }
}

TEST(CharTokenizer, SavesAndLoadsJson) {
  TempDir dir;
  const CharTokenizer tok(std::string("caf\xc3\xa9 \x00!", 8));  // non-ASCII and NUL
  tok.save(dir.path() / "tok.json");
  const CharTokenizer back = CharTokenizer::load(dir.path() / "tok.json");
  EXPECT_EQ(back, tok);
  EXPECT_EQ(back.vocab(), tok.vocab());
  EXPECT_EQ(CharTokenizer::from_json(tok.to_json()), tok);
  EXPECT_NE(tok.to_json().find("\"format\": \"stride.CharTokenizer\""), std::string::npos);

  EXPECT_THROW(CharTokenizer::from_json("{not json"), IOError);
  try {  // a hostile file's bytes never reach the terminal raw
    CharTokenizer::from_json("\x1b[2J\xff\xfe");
    ADD_FAILURE() << "accepted garbage";
  } catch (const IOError& e) {
    for (char c : std::string(e.what())) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << int(c);
  }
  EXPECT_THROW(CharTokenizer::from_json(R"({"format": "other", "version": 1, "vocab": [1]})"),
               IOError);
  EXPECT_THROW(
      CharTokenizer::from_json(R"({"format": "stride.CharTokenizer", "version": 3, "vocab": [1]})"),
      IOError);
  EXPECT_THROW(CharTokenizer::from_json(
                   R"({"format": "stride.CharTokenizer", "version": 2, "vocab": [2, 1]})"),
               IOError);
  EXPECT_THROW(CharTokenizer::from_json(
                   R"({"format": "stride.CharTokenizer", "version": 2, "vocab": [55296]})"),
               IOError);  // a surrogate
  EXPECT_THROW(CharTokenizer::from_json(
                   R"({"format": "stride.CharTokenizer", "version": 2, "vocab": [1114112]})"),
               IOError);
  // Version 1 held bytes: ASCII ones load as the same code points, others
  // (parts of UTF-8 characters) cannot.
  EXPECT_EQ(CharTokenizer::from_json(
                R"({"format": "stride.CharTokenizer", "version": 1, "vocab": [10, 97]})"),
            CharTokenizer("a\n"));
  EXPECT_THROW(CharTokenizer::from_json(
                   R"({"format": "stride.CharTokenizer", "version": 1, "vocab": [97, 195]})"),
               IOError);
  EXPECT_THROW(CharTokenizer::from_json(R"({"format": "stride.CharTokenizer", "version": 1,
                                            "vocab_size": 3, "vocab": [1, 2]})"),
               IOError);
  EXPECT_THROW(CharTokenizer::load(dir.path() / "missing.json"), IOError);
  EXPECT_THROW(CharTokenizer::from_vocab(U"ba"), ValueError);
  EXPECT_EQ(CharTokenizer::from_vocab(U"ab").id('b'), 1);
}

TEST(CharTokenizer, RoundTripsTheRealCorpus) {
  SKIP_WITHOUT_CORPUS(path);
  const std::string text = read_text_file(*path);
  ASSERT_EQ(int64_t(text.size()), kTinyShakespeareBytes);
  const CharTokenizer tok(text);
  EXPECT_EQ(tok.vocab_size(), 65);
  EXPECT_EQ(tok.symbol(0), "\n");
  EXPECT_EQ(tok.symbol(1), " ");
  EXPECT_EQ(tok.symbol(64), "z");
  const Tensor ids = tok.encode_tensor(text);
  EXPECT_EQ(ids.size(0), kTinyShakespeareBytes);
  EXPECT_EQ(tok.decode(ids), text);
}

// ---- split ----

TEST(TokenDatasetSplit, ArticleSizesForTinyShakespeare) {
  const int64_t n = 1115394;
  EXPECT_EQ(split_bounds(n, Split::Train).size(), 892315);
  EXPECT_EQ(split_bounds(n, Split::Val).size(), 111539);
  EXPECT_EQ(split_bounds(n, Split::Test).size(), 111540);
  EXPECT_EQ(split_bounds(n, Split::Val).begin, 892315);
  EXPECT_EQ(split_bounds(n, Split::Test).end, n);
}

TEST(TokenDatasetSplit, MatchesPythonsIntOfAFloatProduct) {
  // int(0.8 * n) and int(0.9 * n) as Python computes them, in doubles.
  auto check = [](int64_t n) {
    ASSERT_EQ(split_bounds(n, Split::Train).end, int64_t(0.8 * double(n))) << n;
    ASSERT_EQ(split_bounds(n, Split::Val).end, int64_t(0.9 * double(n))) << n;
  };
  for (int64_t n = 0; n < 200000; ++n) check(n);
  Generator gen(1);
  for (int t = 0; t < 100000; ++t) check(int64_t(uniform_index(gen, uint64_t(1) << 48)));
  EXPECT_THROW(split_bounds(-1, Split::Train), ValueError);
}

TEST(TokenDatasetSplit, RealCorpusSplitSizes) {
  SKIP_WITHOUT_CORPUS(path);
  const CharCorpus corpus = load_char_corpus(*path);
  EXPECT_EQ(corpus.data.num_tokens(), 1115394);
  EXPECT_EQ(corpus.data.split(Split::Train).size(0), 892315);
  EXPECT_EQ(corpus.data.split(Split::Val).size(0), 111539);
  EXPECT_EQ(corpus.data.split(Split::Test).size(0), 111540);
  // The splits tile the corpus, by position.
  const Tensor joined = cat({corpus.data.split(Split::Train), corpus.data.split(Split::Val),
                             corpus.data.split(Split::Test)});
  EXPECT_TRUE(equal(joined, corpus.data.tokens()));
}

// ---- random windows ----

TEST(TokenDatasetWindows, RandomTargetsAreInputsShiftedByOne) {
  // Token i at position i: x[b, 0] is the start and y = x + 1.
  const int64_t L = 40, T = 8, B = 512;
  Generator gen(3);
  auto [x, y] = random_windows_batch(arange(L), B, T, &gen);
  EXPECT_EQ(x.sizes(), IntArrayRef({B, T}));
  EXPECT_EQ(y.sizes(), IntArrayRef({B, T}));
  EXPECT_EQ(x.dtype(), kInt64);
  EXPECT_TRUE(equal(y, x.add(1)));
  EXPECT_TRUE(equal(x.slice(1, 1), y.slice(1, 0, T - 1)));
  std::set<int64_t> starts;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t s = x[b][0].item<int64_t>();
    starts.insert(s);
    EXPECT_TRUE(equal(x[b], arange(s, s + T)));
  }
  // Starts cover [0, L - T - 1) = [0, 31): the article's exclusive bound.
  EXPECT_EQ(*starts.begin(), 0);
  EXPECT_EQ(*starts.rbegin(), L - T - 2);
  EXPECT_EQ(int64_t(starts.size()), L - T - 1);
}

TEST(TokenDatasetWindows, RandomBatchIsReproducibleAndUsesTheSplit) {
  const TokenDataset data(arange(1000));
  Generator a(5), b(5);
  auto [x1, y1] = data.random_batch(Split::Val, 16, 10, &a);
  auto [x2, y2] = data.random_batch(Split::Val, 16, 10, &b);
  EXPECT_TRUE(equal(x1, x2));
  EXPECT_TRUE(equal(y1, y2));
  // Val is positions [800, 900): windows stay inside it.
  EXPECT_GE(x1.min().item<int64_t>(), 800);
  EXPECT_LT(y1.max().item<int64_t>(), 900);
}

TEST(TokenDatasetWindows, RandomWindowsDatasetThroughTheLoader) {
  const TokenDataset data(arange(500));
  const RandomWindows windows = data.random_windows(Split::Train, 16, 64);
  EXPECT_EQ(windows.num_starts(), 400 - 16 - 1);
  auto batches = [&](int64_t workers) {
    DataLoader loader(windows, {.batch_size = 8, .num_workers = workers, .seed = 1});
    std::vector<Tensor> xs;
    for (auto& [x, y] : loader) {
      EXPECT_EQ(x.sizes(), IntArrayRef({8, 16}));
      EXPECT_TRUE(equal(y, x.add(1)));
      EXPECT_LT(x.select(1, 0).max().item<int64_t>(), 400 - 16 - 1);
      xs.push_back(x);
    }
    return cat(xs, 0);
  };
  const Tensor x0 = batches(0);
  EXPECT_EQ(x0.size(0), 64);
  EXPECT_TRUE(equal(batches(2), x0));
  EXPECT_THROW(windows.window_at(400 - 16 - 1), IndexError);
}

TEST(TokenDatasetWindows, TooShortCorporaFailClearly) {
  try {
    random_windows_batch(arange(17), 2, 16);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("shorter than a window"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(random_windows_batch(arange(18), 2, 16));
  const TokenDataset data(arange(100));
  try {
    data.random_batch(Split::Test, 2, 16);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("the test split has 10 tokens"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(TokenDataset(arange(0)), ValueError);
  EXPECT_THROW(TokenDataset(zeros({3})), DTypeError);
  EXPECT_THROW(TokenDataset(arange(6).view({2, 3})), ShapeError);
  EXPECT_THROW(SequentialWindows(arange(1), 4), ValueError);
  EXPECT_THROW(SequentialWindows(arange(4), 4, Tail::Drop), ValueError);
}

// ---- sequential windows ----

// Every target position of a split (1 .. L-1) is covered exactly once.
void expect_exact_cover(const SequentialWindows& windows, int64_t L, bool all_positions) {
  std::vector<int> hits(static_cast<size_t>(L), 0);
  DataLoader loader(windows, {.batch_size = 3, .num_workers = 2});
  for (auto& [x, y] : loader) {
    EXPECT_EQ(x.sizes(), y.sizes());
    const auto xs = x.to_vector<int64_t>();
    const auto ys = y.to_vector<int64_t>();
    for (size_t i = 0; i < ys.size(); ++i) {
      if (ys[i] == kIgnoreIndex) continue;
      EXPECT_EQ(ys[i], xs[i] + 1);  // targets are the inputs shifted by one
      ++hits[static_cast<size_t>(ys[i])];
    }
  }
  EXPECT_EQ(hits[0], 0);
  for (int64_t p = 1; p < L; ++p) {
    if (all_positions) {
      EXPECT_EQ(hits[size_t(p)], 1) << "position " << p;
    } else {
      EXPECT_LE(hits[size_t(p)], 1) << "position " << p;
    }
  }
}

TEST(TokenDatasetWindows, SequentialWindowsCoverTheSplitExactlyOnce) {
  for (int64_t L : {2, 17, 33, 50, 101}) {
    const SequentialWindows padded(arange(L), 8, Tail::Pad);
    EXPECT_EQ(padded.size(), (L - 1 + 7) / 8);
    expect_exact_cover(padded, L, true);
  }
  // Tail::Pad pads x with 0 and y with the ignore index.
  const SequentialWindows padded(arange(12), 8, Tail::Pad);
  auto [x, y] = padded.get(1);
  EXPECT_EQ(x.to_vector<int64_t>(), (std::vector<int64_t>{8, 9, 10, 0, 0, 0, 0, 0}));
  EXPECT_EQ(y.to_vector<int64_t>(),
            (std::vector<int64_t>{9, 10, 11, -100, -100, -100, -100, -100}));
  // Tail::Shorter: a short final window (batch size 1 to stack it alone).
  const SequentialWindows shorter(arange(12), 8, Tail::Shorter);
  EXPECT_EQ(shorter.get(1).first.size(0), 3);
  std::vector<int> hits(12, 0);
  for (int64_t k = 0; k < shorter.size(); ++k) {
    for (int64_t v : shorter.get(k).second.to_vector<int64_t>()) ++hits[size_t(v)];
  }
  for (int64_t p = 1; p < 12; ++p) EXPECT_EQ(hits[size_t(p)], 1);
  // Tail::Drop: only full windows, never a position twice.
  const SequentialWindows dropped(arange(50), 8, Tail::Drop);
  EXPECT_EQ(dropped.size(), 6);
  expect_exact_cover(dropped, 50, false);
}

TEST(TokenDatasetWindows, SequentialWindowsOnTheRealValSplit) {
  SKIP_WITHOUT_CORPUS(path);
  const CharCorpus corpus = load_char_corpus(*path);
  const SequentialWindows windows = corpus.data.sequential_windows(Split::Val, 16);
  EXPECT_EQ(windows.size(), (111539 - 1 + 15) / 16);
  int64_t targets = 0;
  DataLoader loader(windows, {.batch_size = 256, .num_workers = 2});
  for (auto& [x, y] : loader) targets += y.ne(kIgnoreIndex).sum().item<int64_t>();
  EXPECT_EQ(targets, 111539 - 1);
}

// ---- corpora ----

TEST(TokenDatasetCorpus, EmptyAndUnmappableCorporaFailClearly) {
  TempDir dir;
  try {
    load_char_corpus(dir.write("empty.txt", ""));
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("is empty"), std::string::npos) << e.what();
  }
  const CharTokenizer tok("abc\n");
  try {
    load_char_corpus(dir.write("other.txt", "abc\nab\xe2\x80\x94"), &tok);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("other.txt"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'\xe2\x80\x94' (U+2014) at byte 6"), std::string::npos) << msg;
  }
  EXPECT_THROW(load_char_corpus(dir.path() / "missing.txt"), IOError);
  const CharCorpus ok = make_char_corpus("abcabc\n", &tok);
  EXPECT_EQ(ok.data.num_tokens(), 7);
  EXPECT_EQ(ok.tokenizer, tok);
}

}  // namespace
}  // namespace stride::data
