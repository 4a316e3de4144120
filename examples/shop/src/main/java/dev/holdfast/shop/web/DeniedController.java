package dev.holdfast.shop.web;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.security.web.WebAttributes;
import org.springframework.security.web.csrf.CsrfException;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.RequestMapping;

/** Spring Security forwards here on 403: a missing or wrong CSRF token, or a page of another role. */
@Controller
class DeniedController {

    private final Texts texts;

    DeniedController(Texts texts) {
        this.texts = texts;
    }

    @RequestMapping("/denied")
    String denied(HttpServletRequest request, HttpServletResponse response, Model model) {
        response.setStatus(HttpServletResponse.SC_FORBIDDEN);
        Object cause = request.getAttribute(WebAttributes.ACCESS_DENIED_403);
        boolean csrf = cause instanceof CsrfException;
        model.addAttribute("page", csrf ? "csrf" : "forbidden");
        model.addAttribute("title", texts.get(csrf ? "problem.csrf.title" : "problem.forbidden.title"));
        model.addAttribute("message", texts.get(csrf ? "problem.csrf.text" : "problem.forbidden.text"));
        // The way back to where the user was (the form's page), besides Home.
        model.addAttribute("backLink", ViewSupport.backLink(request, null));
        model.addAttribute("link", "/");
        model.addAttribute("linkText", texts.get("link.home"));
        return "problem";
    }
}
