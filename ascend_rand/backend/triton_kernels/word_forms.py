"""The kernels' two forms of a 32-bit word, as the host names them (no triton import).

Every kernel takes one constexpr, ``LIMBS16`` (wordops.py): ``False`` or ``True``
for uint32 words (the high half of a product by ``tl.umulhi`` or by 16-bit limbs),
``INT32_WORDS`` for the int32 form the NPU needs.  The launcher (launch.py) chooses
the value for each launch and the device functions (wordops.py) branch on it, so the
constant lives here, below both.
"""

# The LIMBS16 value of the int32 word form: words held as int32 bit patterns, no uint32
# tensor anywhere, the 16-bit-limb product.  triton-ascend (Atlas A2/A3) has no uint32
# load, store, add, mul, cast or shift, and umulhi and >> for signed types only (its op
# tables, docs/npu.md), so NPU launches take it.
INT32_WORDS = 2
# Forces either form anywhere (the tests run the int32 form under the interpreter).
WORDS_ENV = "ASCEND_RAND_TRITON_WORDS"
WORD_FORMS = ("int32", "uint32")
