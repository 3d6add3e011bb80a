// _native.SecretReserve: the entropy pool's output buffer (csrc/entropy/reserve.h)
// as a Python type.  Raw CPython rather than pybind11: the pool's 32-byte read
// is one take() call, and pybind11's dispatch would cost more than the copy.
// Every method runs with the GIL held and never releases it, so each call is
// atomic with respect to other Python threads.
#include <Python.h>
#include <pybind11/pybind11.h>

#include <new>

#include "entropy/reserve.h"

namespace py = pybind11;
using ascend_rand::entropy::Reserve;

namespace {

struct ReserveObject {
  PyObject_HEAD
  Reserve* reserve;
};

Reserve& of(PyObject* self) { return *reinterpret_cast<ReserveObject*>(self)->reserve; }

PyObject* reserve_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  if (PyTuple_GET_SIZE(args) != 0 || (kwargs && PyDict_GET_SIZE(kwargs) != 0)) {
    PyErr_SetString(PyExc_TypeError, "SecretReserve() takes no arguments");
    return nullptr;
  }
  PyObject* self = type->tp_alloc(type, 0);
  if (!self) return nullptr;
  auto* obj = reinterpret_cast<ReserveObject*>(self);
  obj->reserve = new (std::nothrow) Reserve();
  if (!obj->reserve) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return self;
}

void reserve_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  delete reinterpret_cast<ReserveObject*>(self)->reserve;  // wipes and unmaps
  type->tp_free(self);
  Py_DECREF(type);
}

// take(n): the next n bytes as bytes, or None when fewer than n are held.
PyObject* reserve_take(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1 || !PyLong_CheckExact(args[0])) {
    PyErr_SetString(PyExc_TypeError, "take(n: int)");
    return nullptr;
  }
  const Py_ssize_t n = PyLong_AsSsize_t(args[0]);
  if (n < 0) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "take(n) needs n >= 0, got %zd", n);
    return nullptr;
  }
  Reserve& r = of(self);
  if (r.available() < static_cast<size_t>(n)) Py_RETURN_NONE;
  PyObject* out = PyBytes_FromStringAndSize(nullptr, n);
  if (!out) return nullptr;
  r.take(reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out)), static_cast<size_t>(n));
  return out;
}

// put(data): append the bytes of any C-contiguous buffer.
PyObject* reserve_put(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "put(data: bytes-like)");
    return nullptr;
  }
  Py_buffer view;
  if (PyObject_GetBuffer(args[0], &view, PyBUF_C_CONTIGUOUS) != 0) return nullptr;
  const bool ok = of(self).put(static_cast<const uint8_t*>(view.buf), static_cast<size_t>(view.len));
  PyBuffer_Release(&view);
  if (!ok) return PyErr_NoMemory();
  Py_RETURN_NONE;
}

PyObject* reserve_clear(PyObject* self, PyObject*) {
  of(self).clear();
  Py_RETURN_NONE;
}

PyObject* reserve_available(PyObject* self, void*) { return PyLong_FromSize_t(of(self).available()); }

PyObject* reserve_taken(PyObject* self, void*) { return PyLong_FromUnsignedLongLong(of(self).taken()); }

PyObject* fork_generation(PyObject*, PyObject*) {
  return PyLong_FromUnsignedLongLong(ascend_rand::entropy::fork_generation());
}

PyMethodDef kReserveMethods[] = {
    {"take", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&reserve_take)), METH_FASTCALL,
     "take(n): the next n bytes (wiped here as they leave), or None when fewer than n are held."},
    {"put", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&reserve_put)), METH_FASTCALL,
     "put(data): append a bytes-like object's bytes after those held."},
    {"clear", &reserve_clear, METH_NOARGS, "clear(): wipe every byte held."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef kReserveGetSet[] = {
    {"available", &reserve_available, nullptr, "bytes ready to take (0 in a child forked since the last put)",
     nullptr},
    {"taken", &reserve_taken, nullptr, "bytes handed out by take() so far", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot kReserveSlots[] = {
    {Py_tp_new, reinterpret_cast<void*>(&reserve_new)},
    {Py_tp_dealloc, reinterpret_cast<void*>(&reserve_dealloc)},
    {Py_tp_methods, kReserveMethods},
    {Py_tp_getset, kReserveGetSet},
    {Py_tp_doc, const_cast<char*>(
                    "SecretReserve(): secret bytes waiting to be handed out, each exactly once.\n\n"
                    "Bytes are wiped as they are taken and when cleared or freed, kept out of core "
                    "dumps, and forgotten in a forked child (whichever way it forked).")},
    {0, nullptr},
};

PyType_Spec kReserveSpec = {"ascend_rand._native.SecretReserve", sizeof(ReserveObject), 0,
                            Py_TPFLAGS_DEFAULT, kReserveSlots};

PyMethodDef kForkGeneration = {"fork_generation", &fork_generation, METH_NOARGS,
                               "fork_generation(): how many fork()s this process descends from since "
                               "the module loaded (a pthread_atfork child handler counts them)."};

}  // namespace

void bind_reserve(py::module_& m) {
  ascend_rand::entropy::install_fork_handler();
  PyObject* type = PyType_FromSpec(&kReserveSpec);
  if (!type) throw py::error_already_set();
  m.add_object("SecretReserve", py::reinterpret_steal<py::object>(type));
  const py::object name = m.attr("__name__");
  PyObject* fn = PyCFunction_NewEx(&kForkGeneration, nullptr, name.ptr());
  if (!fn) throw py::error_already_set();
  m.add_object("fork_generation", py::reinterpret_steal<py::object>(fn));
}
