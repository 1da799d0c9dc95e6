// Errors thrown by stride. User mistakes throw a subclass of stride::Error
// whose message reads "[op] expected ...; got .... Hint: ..."; a broken
// internal invariant throws InternalError ("... this is a bug in stride").
#pragma once

#include <stdexcept>
#include <string>

namespace stride {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ShapeError : public Error {  // incompatible shapes, bad dims, bad views
 public:
  using Error::Error;
};
class DTypeError : public Error {  // unsupported or mismatched dtypes
 public:
  using Error::Error;
};
class DeviceError : public Error {  // unsupported or mismatched devices
 public:
  using Error::Error;
};
class IndexError : public Error {  // an index out of range
 public:
  using Error::Error;
};
class ValueError : public Error {  // a bad argument value
 public:
  using Error::Error;
};
class OverlapError : public Error {  // an output that aliases an input or itself
 public:
  using Error::Error;
};
class IOError : public Error {  // files: missing, unreadable, malformed
 public:
  using Error::Error;
};
class NotImplementedError : public Error {
 public:
  using Error::Error;
};
class InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace stride
