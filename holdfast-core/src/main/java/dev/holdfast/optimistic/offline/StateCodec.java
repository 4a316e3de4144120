package dev.holdfast.optimistic.offline;

import dev.holdfast.pessimistic.RowRef;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The sealed form of a read set: {@code base64url(payload) "." base64url(HMAC-SHA256)}. The MAC
 * covers a domain label, the caller's binding and the payload, so a state cannot be altered,
 * forged without the key, or moved to another binding. Payload: format byte, the distinct table
 * names (modified UTF-8), the row count, then per row the table's index, an id type tag and value,
 * and the version; numbers are variable-length (LEB128, ids zig-zag), so small ones take one byte.
 */
final class StateCodec {

    static final int MAX_TOKEN_LENGTH = 64 * 1024;
    private static final byte FORMAT = 1;
    private static final String ALGORITHM = "HmacSHA256";
    private static final byte[] DOMAIN = "holdfast-optimistic-offline-lock/1".getBytes(StandardCharsets.UTF_8);
    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DECODER = Base64.getUrlDecoder();

    private final SecretKeySpec key;

    StateCodec(byte[] key) {
        this.key = new SecretKeySpec(key, ALGORITHM);
    }

    String seal(Map<RowRef, Long> versions, String binding) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(FORMAT);
            List<String> tables = versions.keySet().stream()
                    .map(r -> r.table().value())
                    .distinct()
                    .toList();
            writeVarLong(out, tables.size());
            for (String table : tables) {
                out.writeUTF(table);
            }
            writeVarLong(out, versions.size());
            for (Map.Entry<RowRef, Long> e : versions.entrySet()) {
                writeVarLong(out, tables.indexOf(e.getKey().table().value()));
                writeId(out, e.getKey().key());
                writeVarLong(out, e.getValue());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        byte[] payload = bytes.toByteArray();
        return ENCODER.encodeToString(payload) + "." + ENCODER.encodeToString(mac(payload, binding));
    }

    /** A row read back from a state: its table's name, its key, the version recorded. */
    interface RowVisitor {
        void row(String table, Object id, long version);
    }

    /** Verifies {@code token} and hands every recorded row to {@code rows}, in the sealed order. */
    void open(String token, String binding, RowVisitor rows) {
        if (token == null || token.isEmpty()) {
            throw new TamperedStateException("no business-transaction state was given");
        }
        if (token.length() > MAX_TOKEN_LENGTH) {
            throw new TamperedStateException(
                    "business-transaction state is longer than " + MAX_TOKEN_LENGTH + " characters");
        }
        int dot = token.indexOf('.');
        if (dot < 0 || dot != token.lastIndexOf('.')) {
            throw new TamperedStateException("business-transaction state is not of the form payload.signature");
        }
        byte[] payload;
        byte[] signature;
        try {
            payload = DECODER.decode(token.substring(0, dot));
            signature = DECODER.decode(token.substring(dot + 1));
        } catch (IllegalArgumentException e) {
            throw new TamperedStateException("business-transaction state is not valid base64url", e);
        }
        // Constant time, and before any byte of the payload is interpreted.
        if (!MessageDigest.isEqual(mac(payload, binding), signature)) {
            throw new TamperedStateException("business-transaction state has an invalid signature:"
                    + " it was altered, forged, or sealed with another key or binding");
        }
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload))) {
            if (in.readByte() != FORMAT) {
                throw new TamperedStateException("business-transaction state has an unknown format");
            }
            long tableCount = readVarLong(in);
            if (tableCount < 0 || tableCount > payload.length) {
                throw new TamperedStateException("business-transaction state has an impossible table count");
            }
            List<String> tables = new ArrayList<>();
            for (long i = 0; i < tableCount; i++) {
                tables.add(in.readUTF());
            }
            long count = readVarLong(in);
            if (count < 0 || count > payload.length) {
                throw new TamperedStateException("business-transaction state has an impossible row count");
            }
            List<Object[]> read = new java.util.ArrayList<>();
            for (long i = 0; i < count; i++) {
                long table = readVarLong(in);
                if (table < 0 || table >= tables.size()) {
                    throw new TamperedStateException("business-transaction state has an impossible table index");
                }
                Object id = readId(in);
                read.add(new Object[] {tables.get((int) table), id, readVarLong(in)});
            }
            if (in.available() != 0) {
                throw new TamperedStateException("business-transaction state has trailing bytes");
            }
            // Only a state that verified and parsed completely reaches the caller.
            read.forEach(r -> rows.row((String) r[0], r[1], (Long) r[2]));
        } catch (IOException e) {
            throw new TamperedStateException("business-transaction state is truncated", e);
        }
    }

    private byte[] mac(byte[] payload, String binding) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            mac.update(DOMAIN);
            byte[] bound = binding.getBytes(StandardCharsets.UTF_8);
            mac.update(new byte[] {
                (byte) (bound.length >>> 24),
                (byte) (bound.length >>> 16),
                (byte) (bound.length >>> 8),
                (byte) bound.length
            });
            mac.update(bound);
            return mac.doFinal(payload);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 is not available in this JDK", e);
        }
    }

    private static void writeId(DataOutputStream out, Object id) throws IOException {
        if (id instanceof Long l) {
            out.writeByte('L');
            writeVarLong(out, (l << 1) ^ (l >> 63));
        } else if (id instanceof String s) {
            out.writeByte('S');
            out.writeUTF(s);
        } else if (id instanceof UUID u) {
            out.writeByte('U');
            out.writeLong(u.getMostSignificantBits());
            out.writeLong(u.getLeastSignificantBits());
        } else if (id instanceof BigDecimal d) {
            out.writeByte('D');
            out.writeUTF(d.toString());
        } else {
            throw new IllegalArgumentException(
                    "unsupported id type " + id.getClass().getName());
        }
    }

    private static void writeVarLong(DataOutputStream out, long value) throws IOException {
        while ((value & ~0x7FL) != 0) {
            out.writeByte((int) ((value & 0x7F) | 0x80));
            value >>>= 7;
        }
        out.writeByte((int) value);
    }

    private static long readVarLong(DataInputStream in) throws IOException {
        long value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            int b = in.readUnsignedByte();
            value |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return value;
            }
        }
        throw new TamperedStateException("business-transaction state has an over-long number");
    }

    private static Object readId(DataInputStream in) throws IOException {
        int tag = in.readByte();
        return switch (tag) {
            case 'L' -> {
                long zigzag = readVarLong(in);
                yield (zigzag >>> 1) ^ -(zigzag & 1);
            }
            case 'S' -> in.readUTF();
            case 'U' -> new UUID(in.readLong(), in.readLong());
            case 'D' -> new BigDecimal(in.readUTF());
            default -> throw new TamperedStateException("business-transaction state has an unknown id type");
        };
    }
}
