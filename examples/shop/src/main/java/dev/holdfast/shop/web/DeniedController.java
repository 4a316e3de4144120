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

    @RequestMapping("/denied")
    String denied(HttpServletRequest request, HttpServletResponse response, Model model) {
        response.setStatus(HttpServletResponse.SC_FORBIDDEN);
        Object cause = request.getAttribute(WebAttributes.ACCESS_DENIED_403);
        boolean csrf = cause instanceof CsrfException;
        model.addAttribute("page", csrf ? "csrf" : "forbidden");
        model.addAttribute("title", csrf ? "The form's security token was missing or wrong" : "Not for your account");
        model.addAttribute("message", csrf
                ? "Every form of the shop carries a security token (CSRF protection); this request had "
                  + "no valid one. Nothing was changed. Go back, reload the page and submit again."
                : "This page belongs to another role. Nothing was changed.");
        model.addAttribute("link", "/");
        model.addAttribute("linkText", "Home");
        return "problem";
    }
}
