package dev.holdfast.spring.boot.web;

import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponse;

/**
 * What the MVC helpers answer a refused request with: a {@link LockProblem} or a {@link VersionProblem}.
 * As an {@link ErrorResponse} its body is an RFC 9457 {@link ProblemDetail} with a stable {@link #code()}.
 */
public sealed interface HoldfastProblem extends ErrorResponse permits LockProblem, VersionProblem {

    /** {@return the HTTP status: 409 for conflicts, 400 for bad input} */
    int status();

    /** {@return a stable code a page or client can switch on} */
    String code();

    /** {@return a short headline} */
    String title();

    /** {@return what happened, and that nothing was changed} */
    String detail();

    /**
     * {@return this problem as a new problem detail: status, title, detail, {@code code}, and the problem's own
     * properties}
     */
    default ProblemDetail problemDetail() {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(getStatusCode(), detail());
        problem.setTitle(title());
        problem.setProperty("code", code());
        addProperties(problem);
        return problem;
    }

    /**
     * Adds the problem's own extension properties.
     *
     * @param problem the problem detail to add them to
     */
    void addProperties(ProblemDetail problem);

    @Override
    default HttpStatusCode getStatusCode() {
        return HttpStatusCode.valueOf(status());
    }

    @Override
    default ProblemDetail getBody() {
        return problemDetail();
    }
}
