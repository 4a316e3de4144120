package dev.holdfast.shop.web;

import org.springframework.web.servlet.mvc.support.RedirectAttributes;

/**
 * The one-line result shown on the next page ({@code fragments :: notice}): a success in the green box,
 * a failure or refusal (nothing done, or not all of it) in the red one with role {@code alert}. The text
 * is HTML ({@link Texts#html}: arguments escaped, times as {@code <time>} elements).
 */
final class Notices {

    static final String TEXT = "notice";
    static final String KIND = "noticeKind";

    private Notices() {}

    /** What was asked was done. */
    static void success(RedirectAttributes redirect, String text) {
        redirect.addFlashAttribute(TEXT, text);
        redirect.addFlashAttribute(KIND, "success");
    }

    /** What was asked was refused or failed, wholly or in part. */
    static void failure(RedirectAttributes redirect, String text) {
        redirect.addFlashAttribute(TEXT, text);
        redirect.addFlashAttribute(KIND, "error");
    }
}
