// stride's exceptions as the Python exceptions PyTorch users catch: an index
// out of range is an IndexError, a bad argument a ValueError, a dtype that
// does not fit a TypeError, a shape or device mismatch a RuntimeError (as
// torch raises), a file that cannot be read an OSError. The message is
// stride's, hint included.
#include "bindings.h"

namespace stride::python {

void bind_errors(nb::module_& m) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const DTypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const IOError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  (void)m;
}

}  // namespace stride::python
