"""CTR_DRBG (NIST SP 800-90A Rev. 1, section 10.2.1) with AES-256, no derivation function.

The block cipher is AES-256 from the optional ``cryptography`` package (``pip install
ascend_rand[secure]``); this module writes only the DRBG's state machine.  Parameters
(SP 800-90A Table 3, AES-256): keylen = 256, blocklen = 128, seedlen = 384 bits, and
ctr_len = blocklen, so the whole V block is the counter and "V = (V + 1) mod 2**128" is
exactly the big-endian 128-bit increment of AES-CTR mode.  That lets one AES-CTR call
starting at V + 1 produce a whole request's output AND the three blocks of the closing
CTR_DRBG_Update (they continue the same counter sequence under the same key).

No derivation function, so the entropy input must be exactly seedlen (48 bytes) of full
entropy (the pool's conditioned bytes are), and personalization / additional input are
at most 48 bytes, zero-padded.  No nonce.  No prediction resistance: the pool reseeds at
its own interval and after fork.

Checked against NIST CAVP's CTR_DRBG.rsp known answers (tests/data/ctr_drbg_aes256.rsp).
"""

from .._validate import integer
from .drbg import MAX_BYTES_PER_REQUEST, MAX_RESEED_INTERVAL, ReseedRequired, check_request

try:  # optional: without it the pool's "drbg" mode uses HMAC_DRBG (drbg.py)
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
except ImportError:  # pragma: no cover - exercised where cryptography is absent
    Cipher = None

AVAILABLE = Cipher is not None
SECURITY_STRENGTH = 256  # bits
KEYLEN = 32  # bytes
BLOCKLEN = 16  # bytes
SEEDLEN = KEYLEN + BLOCKLEN  # 48 bytes = 384 bits
ENTROPY_BYTES = SEEDLEN  # no df: the entropy input is exactly seedlen bits
_COUNTER_MOD = 1 << (8 * BLOCKLEN)  # ctr_len = blocklen: V wraps mod 2**128

__all__ = ["AVAILABLE", "CtrDrbg", "ENTROPY_BYTES", "ReseedRequired", "SEEDLEN"]


def _require():
    if not AVAILABLE:
        raise ImportError(
            "CTR_DRBG needs the 'cryptography' package (pip install 'ascend_rand[secure]'); "
            "without it use HmacDrbg (ascend_rand.entropy.drbg)"
        )


def _bytes_arg(value, name, exact=None, maximum=SEEDLEN):
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be bytes, got {type(value).__name__}")
    value = bytes(value)
    if exact is not None and len(value) != exact:
        raise ValueError(f"{name} must hold exactly {exact} bytes (seedlen, no derivation function), got {len(value)}")
    if len(value) > maximum:
        raise ValueError(f"{name} must hold at most {maximum} bytes (seedlen, no derivation function), got {len(value)}")
    return value


def _xor_padded(a, b):
    # SP 800-90A 10.2.1.3.1 / 10.2.1.4.1: shorter inputs are padded with zeros to seedlen.
    n = SEEDLEN
    return (int.from_bytes(a.ljust(n, b"\0"), "big") ^ int.from_bytes(b.ljust(n, b"\0"), "big")).to_bytes(n, "big")


def _keystream(key, v, nbytes):
    """AES-256 of the counter blocks V+1, V+2, ... (mod 2**128), ``nbytes`` of them in bytes."""
    start = ((int.from_bytes(v, "big") + 1) % _COUNTER_MOD).to_bytes(BLOCKLEN, "big")
    enc = Cipher(algorithms.AES(key), modes.CTR(start)).encryptor()
    return enc.update(bytes(nbytes)) + enc.finalize()


class CtrDrbg:
    """SP 800-90A CTR_DRBG over AES-256 without a derivation function or prediction resistance.

    ``entropy_input``: exactly 48 bytes (seedlen) of full entropy; ``personalization``:
    at most 48 bytes, XORed in.  ``generate(n)`` returns at most 65536 bytes per request;
    after ``reseed_interval`` requests it raises ``ReseedRequired`` until ``reseed()``.
    Needs the optional ``cryptography`` package.

    >>> d = CtrDrbg(bytes(48))
    >>> len(d.generate(40)), d.reseed_counter
    (40, 2)
    >>> d.generate(8) == CtrDrbg(bytes(48)).generate(8)
    False
    """

    name = "CTR_DRBG"  # in ReseedRequired's message

    __slots__ = ("_key", "_v", "reseed_counter", "reseed_interval")

    def __init__(self, entropy_input, personalization=b"", reseed_interval=MAX_RESEED_INTERVAL):
        _require()
        interval = integer(reseed_interval, "reseed_interval")
        if not 1 <= interval <= MAX_RESEED_INTERVAL:
            raise ValueError(f"reseed_interval must be in [1, 2**48], got {interval}")
        self.reseed_interval = interval
        seed_material = _xor_padded(
            _bytes_arg(entropy_input, "entropy_input", exact=ENTROPY_BYTES),
            _bytes_arg(personalization, "personalization"),
        )
        # 10.2.1.3.1: Key = 0^keylen, V = 0^blocklen, then Update(seed_material).
        self._key = bytes(KEYLEN)
        self._v = bytes(BLOCKLEN)
        self._update(_keystream(self._key, self._v, SEEDLEN), seed_material)
        self.reseed_counter = 1

    def _update(self, temp, provided_data):
        # 10.2.1.2: temp = E(K, V+1) || E(K, V+2) || E(K, V+3), computed by the caller;
        # temp ^= provided_data; Key, V = leftmost keylen, rightmost blocklen.
        t = (int.from_bytes(temp, "big") ^ int.from_bytes(provided_data, "big")).to_bytes(SEEDLEN, "big")
        self._key, self._v = t[:KEYLEN], t[KEYLEN:]

    def reseed(self, entropy_input, additional_input=b""):
        """Mix fresh ``entropy_input`` (exactly 48 bytes) into the state (10.2.1.4.1).

        >>> d = CtrDrbg(bytes(48), reseed_interval=1)
        >>> _ = d.generate(4); d.reseed(bytes(48)); d.reseed_counter
        1
        """
        seed_material = _xor_padded(
            _bytes_arg(entropy_input, "entropy_input", exact=ENTROPY_BYTES),
            _bytes_arg(additional_input, "additional_input"),
        )
        self._update(_keystream(self._key, self._v, SEEDLEN), seed_material)
        self.reseed_counter = 1

    @property
    def reseed_required(self):
        """True when the next generate() would exceed the reseed interval."""
        return self.reseed_counter > self.reseed_interval

    def generate(self, n, additional_input=b""):
        """``n`` pseudorandom bytes, 0 <= n <= 65536 (10.2.1.5.1).

        >>> CtrDrbg(bytes(48)).generate(0)
        b''
        """
        additional_input = _bytes_arg(additional_input, "additional_input")
        n = check_request(n, self)
        if additional_input:
            additional_input = additional_input.ljust(SEEDLEN, b"\0")
            self._update(_keystream(self._key, self._v, SEEDLEN), additional_input)
        else:
            additional_input = bytes(SEEDLEN)
        # Output blocks are E(K, V+1) .. E(K, V+m), m = ceil(n / 16), after which V = V + m;
        # the closing Update then encrypts V+m+1 .. V+m+3 under the same key: one CTR run.
        used = -(-n // BLOCKLEN) * BLOCKLEN
        stream = _keystream(self._key, self._v, used + SEEDLEN)
        self._update(stream[used:], additional_input)
        self.reseed_counter += 1
        return stream[:n]
