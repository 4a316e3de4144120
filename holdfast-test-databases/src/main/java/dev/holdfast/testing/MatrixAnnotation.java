package dev.holdfast.testing;

import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Optional;

/**
 * Finds the annotation of a test method that registers a matrix extension ({@code @DatabaseTest},
 * {@code @FaultTest}) and reads its {@code only()}. The extension names no annotation type, so the
 * annotation and its extension do not depend on each other.
 */
final class MatrixAnnotation {

    private MatrixAnnotation() {}

    /** Whether an annotation of {@code method} registers {@code extension}. */
    static boolean registers(Optional<Method> method, Class<? extends Extension> extension) {
        return method.flatMap(m -> find(m, extension)).isPresent();
    }

    /** The {@code only()} of the annotation of the context's test method that registers {@code extension}. */
    static TestDatabase.Kind[] only(ExtensionContext context, Class<? extends Extension> extension) {
        Method method = context.getRequiredTestMethod();
        Annotation annotation = find(method, extension)
                .orElseThrow(() -> new IllegalStateException(
                        "no annotation of " + method + " registers " + extension.getSimpleName()));
        try {
            return (TestDatabase.Kind[])
                    annotation.annotationType().getMethod("only").invoke(annotation);
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalStateException(
                    annotation.annotationType().getSimpleName() + " needs an only() of TestDatabase.Kind[]", e);
        }
    }

    private static Optional<Annotation> find(Method method, Class<? extends Extension> extension) {
        return Arrays.stream(method.getAnnotations())
                .filter(a -> {
                    ExtendWith with = a.annotationType().getAnnotation(ExtendWith.class);
                    return with != null && Arrays.asList(with.value()).contains(extension);
                })
                .findFirst();
    }
}
