package dev.holdfast.spring.boot.web;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.http.HttpStatus;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.servlet.View;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * How the Holdfast exception handlers answer: {@code application/problem+json} for JSON clients,
 * the application's view when one is configured, else a minimal built-in page.
 */
final class ProblemResponses {

    private ProblemResponses() {
    }

    /**
     * @param view        the application's view name, or null for the built-in page
     * @param attribute   the model attribute the problem goes under
     * @param detail      the problem-detail fields for JSON
     * @param builtInPage the HTML of the built-in page, built only when needed
     * @param addToModel  what the application adds to its view's model
     */
    static ModelAndView respond(HttpServletRequest request, int status, String view, String attribute, Object problem,
                                Map<String, Object> detail, Supplier<String> builtInPage,
                                Consumer<Map<String, Object>> addToModel) {
        HttpStatus httpStatus = HttpStatus.valueOf(status);
        boolean json = wantsJson(request);
        if (json || view == null) {
            ModelAndView mv = new ModelAndView(json
                    ? new Body("application/problem+json", () -> Json.object(detail))
                    : new Body("text/html;charset=UTF-8", builtInPage));
            mv.setStatus(httpStatus);
            return mv;
        }
        Map<String, Object> model = new HashMap<>();
        model.put(attribute, problem);
        addToModel.accept(model);
        return new ModelAndView(view, model, httpStatus);
    }

    /** JSON when the client accepts JSON and does not ask for HTML (browsers navigating always do). */
    static boolean wantsJson(HttpServletRequest request) {
        String accept = request.getHeader("Accept");
        return accept != null && accept.contains("json") && !accept.contains("text/html");
    }

    /** A fixed body of one content type. */
    private record Body(String contentType, Supplier<String> body) implements View {
        @Override
        public String getContentType() {
            return contentType;
        }

        @Override
        public void render(Map<String, ?> model, HttpServletRequest request, HttpServletResponse response) throws Exception {
            response.setContentType(contentType);
            response.setCharacterEncoding(StandardCharsets.UTF_8.name());
            response.getWriter().write(body.get());
        }
    }
}
